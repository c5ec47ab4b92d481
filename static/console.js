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

  document.addEventListener("htmx:sseError", streamState("closed"));

  // A seat button says only its id; its state is its class. A focused
  // seat gets its full accessible name ("A-1 · available") from the state
  // names the grid carries once, so assistive technology hears the state
  // without 20,000 labels in the page.
  document.addEventListener("focusin", function (ev) {
    var seat = ev.target.closest && ev.target.closest("[data-panel] .seat-row button");
    if (seat) {
      var state = ["available", "locked", "sold", "blocked"].filter(function (s) { return seat.classList.contains(s); })[0];
      var grid = seat.closest("[data-panel]");
      seat.setAttribute("aria-label", seat.textContent + " · " + (grid.getAttribute("data-" + state) || state));
    }
  });

  // Counter sale: on a seat map with the counter form, clicking an
  // available or blocked seat adds it to the sale or takes it out;
  // shift-click adds every sellable seat of the row between the last seat
  // picked and this one. Enter or Space on a seat presses it like a click
  // (moving between seats: seatmap.js). The form's seat field is the selection: it
  // can be typed into, and the map follows it. The stream replaces seat
  // buttons when their state changes, so the marks are drawn again after
  // every swap.
  var lastPicked = null;

  function sellable(btn) {
    return btn.classList.contains("available") || btn.classList.contains("blocked");
  }

  // A row's seats, left to right, across its runs.
  function rowSeats(row) {
    return Array.prototype.slice.call(row.querySelectorAll("button"));
  }

  function picked(field) {
    return field.value.split(/[\s,]+/).filter(function (s) { return s !== ""; });
  }

  function markPicked() {
    var field = document.getElementById("counter-seats");
    if (!field) {
      return;
    }
    var ids = picked(field);
    var want = {};
    ids.forEach(function (id) { want[id] = true; });
    var marked = document.querySelectorAll(".seat-row .picked");
    for (var i = 0; i < marked.length; i++) {
      if (!want[marked[i].id.slice(5)]) {
        marked[i].classList.remove("picked");
        marked[i].removeAttribute("aria-pressed");
      }
    }
    ids.forEach(function (id) {
      var btn = document.getElementById("seat-" + id);
      if (btn) {
        btn.classList.add("picked");
        btn.setAttribute("aria-pressed", "true");
      }
    });
    var count = document.getElementById("counter-count");
    if (count) {
      count.textContent = ids.length === 0 ? "" : ids.length === 1 ? count.getAttribute("data-one") :
        count.getAttribute("data-many").replace("%d", ids.length);
    }
  }

  document.addEventListener("click", function (ev) {
    var btn = ev.target.closest && ev.target.closest(".seat-row button");
    var field = document.getElementById("counter-seats");
    if (!btn || !field || !sellable(btn)) {
      return;
    }
    var id = btn.id.slice(5);
    var ids = picked(field);
    var at = ids.indexOf(id);
    var last = lastPicked && document.getElementById("seat-" + lastPicked);
    if (ev.shiftKey && last && last.closest(".seat-row") === btn.closest(".seat-row")) {
      var row = rowSeats(btn.closest(".seat-row"));
      var a = row.indexOf(last), b = row.indexOf(btn);
      for (var i = Math.min(a, b); i <= Math.max(a, b); i++) {
        var sid = row[i].id.slice(5);
        if (sellable(row[i]) && ids.indexOf(sid) < 0) {
          ids.push(sid);
        }
      }
    } else if (at >= 0) {
      ids.splice(at, 1);
    } else {
      ids.push(id);
    }
    lastPicked = id;
    field.value = ids.join(", ");
    markPicked();
  });

  document.addEventListener("input", function (ev) {
    if (ev.target.id === "counter-seats") {
      markPicked();
    }
  });

  // The ticket page's print button (inline handlers are forbidden).
  document.addEventListener("click", function (ev) {
    if (ev.target.closest && ev.target.closest("[data-print]")) {
      window.print();
    }
  });

  // The header's menu button (narrow screens; console.css hides the menu
  // while the button says aria-expanded="false"). It stays hidden, and the
  // menu open, for a browser without script.
  function menuButton() {
    var btn = document.getElementById("menu-toggle");
    if (btn) {
      btn.hidden = false;
    }
  }
  document.addEventListener("click", function (ev) {
    var btn = ev.target.closest && ev.target.closest("#menu-toggle");
    if (btn) {
      btn.setAttribute("aria-expanded", btn.getAttribute("aria-expanded") === "true" ? "false" : "true");
    }
  });
  document.addEventListener("keydown", function (ev) {
    var btn = document.getElementById("menu-toggle");
    if (ev.key === "Escape" && btn && btn.getAttribute("aria-expanded") === "true" && btn.closest("header").contains(ev.target)) {
      btn.setAttribute("aria-expanded", "false");
      btn.focus();
    }
  });

  // On a narrow screen a table.grid shows each row as a card; every cell
  // carries its column's heading (data-label) for console.css to print
  // beside it. Headings spanning columns count for each; tables the
  // server or the stream swaps in are labelled when they arrive.
  function labelTables() {
    var tables = document.querySelectorAll("table.grid");
    for (var i = 0; i < tables.length; i++) {
      var table = tables[i];
      var head = table.tHead && table.tHead.rows[table.tHead.rows.length - 1];
      if (!head) {
        continue;
      }
      var names = [];
      for (var h = 0; h < head.cells.length; h++) {
        for (var span = 0; span < head.cells[h].colSpan; span++) {
          names.push(head.cells[h].textContent.trim());
        }
      }
      for (var b = 0; b < table.tBodies.length; b++) {
        var rows = table.tBodies[b].rows;
        for (var r = 0; r < rows.length; r++) {
          var col = 0;
          for (var c = 0; c < rows[r].cells.length; c++) {
            var cell = rows[r].cells[c];
            if (names[col] && cell.colSpan === 1 && !cell.hasAttribute("data-label")) {
              cell.setAttribute("data-label", names[col]);
            }
            col += cell.colSpan;
          }
        }
      }
      table.classList.add("as-cards");
    }
  }

  document.addEventListener("DOMContentLoaded", menuButton);
  document.addEventListener("DOMContentLoaded", labelTables);
  document.addEventListener("htmx:afterSettle", labelTables);
  document.addEventListener("DOMContentLoaded", tick);
  document.addEventListener("DOMContentLoaded", markPicked);
  document.addEventListener("htmx:oobAfterSwap", markPicked);
  document.addEventListener("seatmap:built", markPicked);
  document.addEventListener("htmx:afterSettle", markPicked);
  document.addEventListener("htmx:afterSettle", tick);
  setInterval(tick, 1000);
})();
