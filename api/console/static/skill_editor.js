// skillet console: the skill form's keyword preview. As the person types keywords (or a test
// message), asks the console which sample messages they would match, by the agent's own
// matcher (GET /console/palavras-chave, same origin, the session's cookie), 300 ms after the
// last key. Results are written with createElement and textContent only.
"use strict";

(function () {
  var DEBOUNCE_MS = 300;
  var box = document.querySelector("[data-keyword-preview]");
  if (!box) { return; }
  var url = box.getAttribute("data-keyword-preview");
  var list = box.querySelector("[data-preview-list]");
  var errorLine = box.querySelector("[data-preview-error]");
  var inputs = document.querySelectorAll("[data-preview]");
  var timer = null;
  var asked = 0;
  var LABELS = { skill: "reconhece", probe: "só sondagem" };

  function value(name) {
    var input = document.querySelector('[data-preview="' + name + '"]');
    return input ? input.value : "";
  }

  function show(answer) {
    while (list.firstChild) { list.removeChild(list.firstChild); }
    answer.samples.forEach(function (sample) {
      var li = document.createElement("li");
      li.className = sample.match ? "casa " + sample.match : "nao-casa";
      var mark = document.createElement("span");
      mark.className = "marca-previa";
      mark.textContent = sample.match ? LABELS[sample.match] : "não reconhece";
      li.appendChild(mark);
      li.appendChild(document.createTextNode(" " + sample.text));
      list.appendChild(li);
    });
    errorLine.hidden = !answer.error;
    errorLine.textContent = answer.error || "";
  }

  function ask() {
    var mine = ++asked;
    var query = new URLSearchParams({
      keywords: value("keywords"),
      probe_keywords: value("probe_keywords"),
      teste: value("teste")
    });
    fetch(url + "?" + query.toString(), { credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (answer) { if (answer && mine === asked) { show(answer); } })
      .catch(function () { /* the next key press asks again */ });
  }

  function later() {
    if (timer) { clearTimeout(timer); }
    timer = setTimeout(ask, DEBOUNCE_MS);
  }

  Array.prototype.forEach.call(inputs, function (input) {
    input.addEventListener("input", later);
  });
  ask();
})();
