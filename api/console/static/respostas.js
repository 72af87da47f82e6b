// skillet console: quick replies (respostas rápidas) in a conversation's reply box.
// Typing "/" at the start of a line lists the org's quick replies (rendered by the server
// into a hidden list); more letters filter them by title; a click or Enter puts the text in
// the box in place of "/..." (the person can still change it before sending). Built with
// createElement and textContent only.
"use strict";

(function () {
  var box = document.getElementById("text");
  var panel = document.querySelector("[data-quick-replies]");
  if (!box || !panel) { return; }
  var list = panel.querySelector("[data-quick-list]");
  var MAX_SHOWN = 8;
  var replies = Array.prototype.map.call(
    panel.querySelectorAll("[data-quick-source] li"),
    function (li) { return { title: li.getAttribute("data-title") || "", text: li.textContent }; }
  );
  var shown = [];
  var selected = 0;

  function plain(text) {
    return text.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
  }

  // The "/query" being typed: a slash at the start of a line, up to the caret.
  function typedQuery() {
    var before = box.value.slice(0, box.selectionStart);
    var found = /(^|\n)\/([^\n\/]{0,40})$/.exec(before);
    return found ? { query: found[2], start: before.length - found[2].length - 1 } : null;
  }

  function hide() { panel.hidden = true; shown = []; }

  function mark() {
    Array.prototype.forEach.call(list.children, function (li, i) {
      li.setAttribute("aria-selected", i === selected ? "true" : "false");
    });
  }

  function pick(reply) {
    var typed = typedQuery();
    if (!typed) { hide(); return; }
    var end = box.selectionStart;
    box.value = box.value.slice(0, typed.start) + reply.text + box.value.slice(end);
    var caret = typed.start + reply.text.length;
    box.setSelectionRange(caret, caret);
    hide();
    box.focus();
  }

  function show() {
    var typed = typedQuery();
    if (!typed) { hide(); return; }
    var wanted = plain(typed.query);
    shown = replies.filter(function (r) { return plain(r.title).indexOf(wanted) !== -1; })
      .slice(0, MAX_SHOWN);
    while (list.firstChild) { list.removeChild(list.firstChild); }
    if (!shown.length) { hide(); return; }
    shown.forEach(function (reply) {
      var li = document.createElement("li");
      li.setAttribute("role", "option");
      var title = document.createElement("strong");
      title.textContent = "/" + reply.title;
      var text = document.createElement("small");
      text.textContent = reply.text;
      li.appendChild(title);
      li.appendChild(text);
      li.addEventListener("mousedown", function (event) { event.preventDefault(); pick(reply); });
      list.appendChild(li);
    });
    selected = 0;
    mark();
    panel.hidden = false;
  }

  box.addEventListener("input", show);
  box.addEventListener("blur", function () { window.setTimeout(hide, 150); });
  box.addEventListener("keydown", function (event) {
    if (panel.hidden || !shown.length) { return; }
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      selected = (selected + (event.key === "ArrowDown" ? 1 : shown.length - 1)) % shown.length;
      mark();
    } else if (event.key === "Enter" || event.key === "Tab") {
      event.preventDefault();
      pick(shown[selected]);
    } else if (event.key === "Escape") {
      hide();
    }
  });
}());
