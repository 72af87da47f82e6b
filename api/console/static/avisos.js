// skillet console: tells the signed-in person, on any page, about a conversation that needs
// them: one that starts waiting, a customer's new message in one they hold, one passed to
// them. Polls /console/avisos/dados every 3 s (same origin, the session's cookie) and shows
// the count in the tab's title, plays a short sound (unless muted: remembered in
// localStorage) and shows a browser notification (only after the person allowed it with the
// button; at most one per conversation per 30 s; the contact's number, never the message).
// What it already told is kept per tab (sessionStorage), so moving between pages repeats
// nothing; the first poll of a tab only takes note of what is there.
"use strict";

(function () {
  var POLL_MS = 3000;
  var PER_CONVERSATION_MS = 30000;
  var SEEN = "skillet.avisos.vistos";
  var TOLD = "skillet.avisos.notificados";
  var MUTED = "skillet.avisos.mudo";
  var TITLES = {
    waiting: "Conversa esperando uma pessoa",
    message: "Nova mensagem do cliente",
    transfer: "Conversa passada para você"
  };
  var root = document.querySelector("[data-avisos]");
  if (!root) { return; }
  var url = root.getAttribute("data-avisos");
  var sound = new Audio(root.getAttribute("data-som"));
  sound.preload = "auto";
  var allow = root.querySelector("[data-avisos-permitir]");
  var mute = root.querySelector("[data-avisos-som]");
  var baseTitle = document.title;
  var canNotify = "Notification" in window;

  function load(store, key) {
    try { return JSON.parse(store.getItem(key)); } catch (e) { return null; }
  }

  function save(store, key, value) {
    try { store.setItem(key, JSON.stringify(value)); } catch (e) { /* private mode: no memory */ }
  }

  function muted() { return load(window.localStorage, MUTED) === true; }

  function showMute() {
    mute.textContent = muted() ? "Som: desligado" : "Som: ligado";
    mute.setAttribute("aria-pressed", muted() ? "true" : "false");
  }

  function showAllow() {
    allow.hidden = !(canNotify && Notification.permission === "default");
  }

  mute.addEventListener("click", function () {
    save(window.localStorage, MUTED, !muted());
    showMute();
  });
  allow.addEventListener("click", function () {
    if (!canNotify) { return; }
    var asked = Notification.requestPermission(showAllow);
    if (asked && asked.then) { asked.then(showAllow); }
  });

  function notify(item) {
    if (!canNotify || Notification.permission !== "granted") { return; }
    var told = load(window.sessionStorage, TOLD) || {};
    var now = Date.now();
    if (told[item.id] && now - told[item.id] < PER_CONVERSATION_MS) { return; }
    told[item.id] = now;
    save(window.sessionStorage, TOLD, told);
    try {
      var shown = new Notification(TITLES[item.kind] || "Conversa", {
        body: item.who,
        tag: "skillet-" + item.id
      });
      shown.onclick = function () {
        window.focus();
        window.location.href = "/console/conversas/" + encodeURIComponent(item.id);
      };
    } catch (e) { /* a browser that only notifies from a service worker */ }
  }

  function take(data) {
    document.title = data.count > 0 ? "(" + data.count + ") " + baseTitle : baseTitle;
    var seen = load(window.sessionStorage, SEEN);
    var first = seen === null;
    var now = {};
    var fresh = [];
    data.items.forEach(function (item) {
      var key = item.kind + ":" + item.id;
      now[key] = item.at;
      if (!first && (!seen || seen[key] !== item.at)) { fresh.push(item); }
    });
    save(window.sessionStorage, SEEN, now);
    if (!fresh.length) { return; }
    if (!muted()) {
      sound.currentTime = 0;
      var playing = sound.play();
      if (playing && playing.catch) { playing.catch(function () { /* not allowed yet */ }); }
    }
    fresh.forEach(notify);
  }

  function poll() {
    fetch(url, { credentials: "same-origin", cache: "no-store", headers: { Accept: "application/json" } })
      .then(function (answer) {
        var type = answer.headers.get("Content-Type") || "";
        if (!answer.ok || type.indexOf("application/json") !== 0) { return null; }
        return answer.json().then(take);
      })
      .catch(function () { return undefined; })
      .then(function (stop) { if (stop !== null) { window.setTimeout(poll, POLL_MS); } });
  }

  showMute();
  showAllow();
  poll();
}());
