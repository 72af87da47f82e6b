// skillet console: keeps the Atendimento pages current without a reload.
// Polls the page's JSON (same origin, the session's cookie) every 3 s and rebuilds the lists
// with createElement and textContent only: what a customer, the agent or a person wrote is
// never parsed as HTML. The server renders the same values (api/console/attendance_view.py).
"use strict";

(function () {
  var POLL_MS = 3000;
  var root = document.querySelector("[data-poll]");
  if (!root) { return; }
  var url = root.getAttribute("data-poll");
  var view = root.getAttribute("data-view");
  var statusLine = root.querySelector("[data-status]");
  var last = null;

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }

  function replaceChildren(list, nodes) {
    while (list.firstChild) { list.removeChild(list.firstChild); }
    nodes.forEach(function (node) { list.appendChild(node); });
  }

  function showList(name, nodes) {
    var list = root.querySelector('[data-list="' + name + '"]');
    var empty = root.querySelector('[data-empty="' + name + '"]');
    if (list) { replaceChildren(list, nodes); }
    if (empty) { empty.hidden = nodes.length > 0; }
  }

  function queueCard(c, kind) {
    var li = el("li", "conversa " + kind);
    var head = el("div", "cabeca");
    var link = el("a", "contato", c.contact);
    link.setAttribute("href", "/console/conversas/" + encodeURIComponent(c.id));
    head.appendChild(link);
    if (kind === "waiting") {
      head.appendChild(el("span", "espera", "espera " + c.waited));
      head.appendChild(el("span", "motivo", c.why));
    } else {
      head.appendChild(el("span", "quem-tem", "com " + c.holder));
      head.appendChild(el("span", "espera", c.waited));
    }
    if (c.unanswered) { head.appendChild(el("span", "pendentes", c.unanswered + " sem resposta")); }
    li.appendChild(head);
    if (c.last) {
      var p = el("p", "ultima");
      p.appendChild(el("span", "autor", c.last.author + ":"));
      p.appendChild(document.createTextNode(" "));
      p.appendChild(el("span", "texto", c.last.text));
      li.appendChild(p);
    }
    return li;
  }

  function showQueue(data) {
    [["waiting", data.waiting], ["held", data.held]].forEach(function (pair) {
      showList(pair[0], pair[1].map(function (c) { return queueCard(c, pair[0]); }));
      var count = root.querySelector('[data-count="' + pair[0] + '"]');
      if (count) { count.textContent = String(pair[1].length); }
    });
  }

  // A customer's stored media, from the console's own origin (CSP img-src/media-src 'self').
  function mediaNode(media) {
    var node;
    if (media.kind === "audio") {
      node = el("audio", "midia");
      node.controls = true;
      node.preload = "none";
    } else if (media.kind === "image") {
      node = el("img", "midia");
      node.alt = "imagem enviada pelo cliente";
    } else {
      node = el("a", "midia", "baixar arquivo");
      node.href = media.url;
      return node;
    }
    node.src = media.url;
    return node;
  }

  function message(m) {
    var li = el("li", "msg autor-" + m.author);
    li.appendChild(el("div", "quem-disse", m.label));
    if (m.quote) {
      var quote = el("blockquote", "citacao");
      quote.appendChild(el("span", "dica", "em resposta a:"));
      quote.appendChild(document.createTextNode(" " + m.quote));
      li.appendChild(quote);
    }
    var bubble = el("div", "balao");
    if (m.kind) {
      bubble.appendChild(el("em", null, "[" + m.kind + "]"));
      bubble.appendChild(document.createTextNode(" "));
    }
    bubble.appendChild(document.createTextNode(m.text));
    if (m.media) { bubble.appendChild(mediaNode(m.media)); }
    li.appendChild(bubble);
    if (m.reactions) {
      var reactions = el("div", "reacoes");
      reactions.appendChild(el("span", "dica", "reação do cliente:"));
      reactions.appendChild(document.createTextNode(" "));
      var emoji = el("span", null, m.reactions);
      emoji.setAttribute("data-emoji", "");
      reactions.appendChild(emoji);
      li.appendChild(reactions);
    }
    var meta = el("div", "meta");
    meta.appendChild(el("span", null, m.at));
    if (m.delivery) { meta.appendChild(el("span", null, " · entrega: " + m.delivery)); }
    if (m.unanswered) { meta.appendChild(el("span", "sem-resposta", " · sem resposta ainda")); }
    li.appendChild(meta);
    if (m.files && m.files.length) {
      var files = el("ul", "arquivos-enviados");
      m.files.forEach(function (f) { files.appendChild(el("li", null, "arquivo enviado: " + f)); });
      li.appendChild(files);
    }
    if (m.skills && m.skills.length) {
      var skills = el("ul", "skills-usadas");
      m.skills.forEach(function (s) { skills.appendChild(el("li", null, s)); });
      li.appendChild(skills);
    }
    var teach = root.querySelector("[data-teach]");
    var csrf = root.querySelector('input[name="csrf"]');
    if (m.teach && teach && csrf) {
      var form = el("form", "botao ensinar");
      form.method = "post";
      form.action = teach.getAttribute("data-teach") + encodeURIComponent(m.id) + "/ensinar";
      var token = el("input");
      token.type = "hidden";
      token.name = "csrf";
      token.value = csrf.value;
      form.appendChild(token);
      var go = el("button", "link", "Ensinar o agente");
      go.type = "submit";
      form.appendChild(go);
      li.appendChild(form);
    }
    return li;
  }

  function field(name, value) {
    var node = root.querySelector('[data-field="' + name + '"]');
    if (node) { node.textContent = String(value); }
  }

  function shown(name, visible) {
    var node = root.querySelector('[data-field="' + name + '"]');
    if (node) { node.hidden = !visible; }
  }

  function showThread(data) {
    var c = data.conversation;
    var state = root.querySelector("[data-state]");
    if (state) { state.className = "estado-conversa modo-" + c.mode; }
    field("mode_label", c.mode_label);
    field("holder", c.holder);
    shown("holder-line", c.mode === "human");
    field("since", c.since);
    shown("since-line", c.since !== "—");
    field("why", c.why);
    shown("why-line", Boolean(c.why));
    field("unanswered", c.unanswered);
    shown("unanswered-line", c.unanswered > 0);
    field("reopens", c.reopens);
    shown("hours-line", c.after_hours);
    Object.keys(c.offers).forEach(function (name) {
      var form = root.querySelector('[data-offer="' + name + '"]');
      if (form) { form.hidden = !c.offers[name]; }
    });
    showList("thread", data.messages.map(message));
  }

  function say(text) {
    if (statusLine) { statusLine.textContent = text; }
  }

  function poll() {
    fetch(url, { credentials: "same-origin", cache: "no-store", headers: { Accept: "application/json" } })
      .then(function (answer) {
        var type = answer.headers.get("Content-Type") || "";
        if (type.indexOf("application/json") !== 0) {
          // The session ended: the route answered the sign-in page.
          say("Sua sessão terminou: recarregue a página e entre de novo.");
          return null;
        }
        return answer.text().then(function (text) {
          if (!answer.ok) {
            var error = JSON.parse(text).error || {};
            say("Não foi possível atualizar: " + (error.message || "o console não respondeu.") + " Tentando de novo.");
            return;
          }
          // The server's time in the org's zone: every time on the page is said in it.
          var data = JSON.parse(text);
          say("Atualizado às " + data.updated_at + ".");
          delete data.updated_at;  // the lists are rebuilt only when something else changed
          var seen = JSON.stringify(data);
          if (seen === last) { return; }
          last = seen;
          if (view === "queue") { showQueue(data); } else { showThread(data); }
        });
      })
      .catch(function () { say("Sem conexão com o console agora; tentando de novo."); })
      .then(function (stop) { if (stop !== null) { window.setTimeout(poll, POLL_MS); } });
  }

  window.setTimeout(poll, POLL_MS);
}());
