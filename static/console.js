// SeatFlow console behaviour. The Content-Security-Policy forbids inline
// scripts, so everything a page needs from JavaScript lives here and reads
// its input from data- attributes and <meta> tags.
(function () {
  "use strict";

  function meta(name) {
    var m = document.querySelector('meta[name="' + name + '"]');
    return m ? m.getAttribute("content") : "";
  }

  // Every HTMX request (form posts included) carries the session's CSRF
  // token as a header as well as the hidden form field.
  document.addEventListener("htmx:configRequest", function (ev) {
    var token = meta("csrf-token");
    if (token) {
      ev.detail.headers["X-CSRF-Token"] = token;
    }
  });

  // Countdowns: elements with data-expire (epoch milliseconds) show the time
  // left as m:ss. The server's clock is the reference: the page carries the
  // server's "now", so a box-office PC with a wrong clock still counts right.
  var serverNow = parseInt(meta("server-now"), 10);
  var skew = isNaN(serverNow) ? 0 : serverNow - Date.now();

  function pad(n) { return n < 10 ? "0" + n : "" + n; }

  function format(ms) {
    var s = Math.floor(ms / 1000);
    var h = Math.floor(s / 3600);
    var m = Math.floor((s % 3600) / 60);
    s = s % 60;
    return (h > 0 ? h + ":" + pad(m) : "" + m) + ":" + pad(s);
  }

  function tick() {
    var now = Date.now() + skew;
    var els = document.querySelectorAll("[data-expire]");
    for (var i = 0; i < els.length; i++) {
      var el = els[i];
      var left = parseInt(el.getAttribute("data-expire"), 10) - now;
      if (left > 0) {
        el.textContent = format(left);
        el.classList.toggle("soon", left < 60000);
        el.classList.remove("expired");
      } else {
        el.textContent = el.getAttribute("data-expired-text") || "0:00";
        el.classList.add("expired");
      }
    }
  }

  // The live seat map shows whether its event stream is connected (the
  // extension reconnects on its own; staff should know when a map is stale).
  function streamState(state) {
    return function (ev) {
      var el = ev.target.closest && ev.target.closest("[data-sse-state]");
      if (el) {
        el.setAttribute("data-sse-state", state);
      }
    };
  }
  document.addEventListener("htmx:sseOpen", streamState("open"));

  // A click on a seat of the map (mouse or keyboard) loads its panel. One
  // listener serves every seat, the ones the stream swaps in included.
  document.addEventListener("click", function (ev) {
    var seat = ev.target.closest && ev.target.closest("[data-panel] button.seat");
    if (seat && seat.id.indexOf("seat-") === 0) {
      var grid = seat.closest("[data-panel]");
      htmx.ajax("GET", grid.getAttribute("data-panel") + encodeURIComponent(seat.id.slice(5)), { target: "#seat-panel" });
    }
  });
  document.addEventListener("htmx:sseError", streamState("closed"));

  document.addEventListener("DOMContentLoaded", tick);
  document.addEventListener("htmx:afterSettle", tick);
  setInterval(tick, 1000);
})();
