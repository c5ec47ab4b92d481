// The seat map's tools (web/seatmap.templ): the grid as one Tab stop with
// arrow keys between seats, a seat's panel opened from the keyboard with
// the focus on its first action, the find box (a seat, or an order's
// seats), and zoom. A map has up to 20,000 seat buttons: nothing here
// touches every seat at load, and the stream's replacement buttons keep
// what the page added to the ones they replace.
(function () {
  "use strict";

  var SEAT = "#seat-grid .seat-row button";
  var MIN_ZOOM = 0.01;
  var ZOOMS = [0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.15, 1.3, 1.5, 1.75, 2];

  // zoom is the plan's scale across; zoomY, its scale down, is the same
  // but below a quarter (seat labels too small to read), where the plan
  // is drawn taller, up to the seats' being square at a tenth (42 × 26 px
  // at zoom 1, seatmap.css): a seat of a 200-seat row on a phone is a dot
  // to be hit, not a sliver one pixel high; and never under 3 px high,
  // twice the pixel the browser may round its place by.
  var zoom = 1, zoomY = 1;

  function grid() { return document.getElementById("seat-grid"); }
  function seatOf(el) { return el && el.closest ? el.closest(SEAT) : null; }

  // place draws the grid's rows, runs of seats, labels and section names
  // where the plan puts them (data-b: left, top, width and height in
  // pixels at zoom 1, a 0 size left to seatmap.css; web/seatplan.go). The
  // console's CSP forbids style attributes, not styles set from script.
  // The stream's fresh grid is placed as it comes in.
  function place(g) {
    if (!g || g.classList.contains("placed")) {
      return;
    }
    var all = [g].concat(Array.prototype.slice.call(g.querySelectorAll("[data-b]")));
    for (var i = 0; i < all.length; i++) {
      var b = all[i].getAttribute("data-b").split(","), st = all[i].style;
      st.left = b[0] + "px";
      st.top = b[1] + "px";
      if (b[2] !== "0") {
        st.width = b[2] + "px";
      }
      if (b[3] !== "0") {
        st.height = b[3] + "px";
      }
    }
    g.classList.add("placed");
    size();
  }

  // natural is the plan's size in pixels at zoom 1, or null before it is placed.
  function natural() {
    var g = grid(), b = g && g.classList.contains("placed") && g.getAttribute("data-b");
    return b ? { w: +b.split(",")[2], h: +b.split(",")[3] } : null;
  }

  // size makes the sizer round the grid as big as the scaled plan.
  function size() {
    var n = natural(), sizer = document.getElementById("seat-sizer");
    if (n && sizer) {
      sizer.style.width = Math.ceil(n.w * zoom) + "px";
      sizer.style.height = Math.ceil(n.h * zoomY) + "px";
    }
  }

  // The grid's one Tab stop: the seat last focused in it, at first its
  // first seat. Tabbing in lands on it, Tab and Shift+Tab leave the grid;
  // a seat keeps its default tabindex, so 20,000 buttons are not rewritten.
  var current = "";
  var tabbing = false;

  function currentSeat() {
    var g = grid();
    var s = current && document.getElementById(current);
    return g && s && g.contains(s) ? s : g && g.querySelector(SEAT);
  }

  var FOCUSABLE = ["a[href]", "button:not([disabled])", "input:not([disabled]):not([type=hidden])",
    "select:not([disabled])", "textarea:not([disabled])", "[tabindex]"].map(function (s) {
    return s + ":not(#seat-grid *)";
  }).join(",");

  // The nearest element a Tab press reaches outside the grid, after it
  // (forward) or before it.
  function besideGrid(forward) {
    var g = grid(), found = null;
    var all = document.querySelectorAll(FOCUSABLE);
    for (var i = 0; i < all.length; i++) {
      var el = all[i];
      if (el === g || el.tabIndex < 0 || !el.getClientRects().length) {
        continue;
      }
      var after = g.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING;
      if (forward && after) {
        return el;
      }
      if (!forward && !after) {
        found = el;
      }
    }
    return found;
  }

  document.addEventListener("keydown", function (ev) { tabbing = ev.key === "Tab"; }, true);
  document.addEventListener("pointerdown", function () { tabbing = false; }, true);

  document.addEventListener("focusin", function (ev) {
    var seat = seatOf(ev.target);
    if (!seat) {
      return;
    }
    var from = ev.relatedTarget;
    var back = currentSeat();
    if (tabbing && !(from && grid().contains(from)) && back && back !== seat) {
      back.focus();
      return;
    }
    current = seat.id;
  });

  function rowSeats(row) { return row.querySelectorAll("button"); }

  // nextRow is the row step rows below (above, if negative) row, or the
  // last there is on the way; section headings between rows are passed.
  function nextRow(row, step) {
    var r = row, to = row, n = Math.abs(step);
    while (n > 0 && (r = step < 0 ? r.previousElementSibling : r.nextElementSibling)) {
      if (r.classList.contains("seat-row")) {
        to = r;
        n--;
      }
    }
    return to;
  }

  // Moves within the grid: arrows to the neighbouring seat (up and down to
  // the same place in the row), Home and End to a row's ends (with Ctrl,
  // the grid's), Page Up and Down ten rows; Tab leaves.
  document.addEventListener("keydown", function (ev) {
    var seat = seatOf(ev.target);
    if (!seat) {
      return;
    }
    if (ev.key === "Tab") {
      var out = besideGrid(!ev.shiftKey);
      if (out) {
        ev.preventDefault();
        out.focus();
      } else {
        // Nothing beside the grid that way: the browser's own Tab goes
        // on from the grid's first or last seat.
        var ends = grid().querySelectorAll(SEAT);
        (ev.shiftKey ? ends[0] : ends[ends.length - 1]).focus();
      }
      return;
    }
    var row = seat.closest(".seat-row");
    var seats = rowSeats(row);
    var col = Array.prototype.indexOf.call(seats, seat);
    var next = null, to = null, all;
    switch (ev.key) {
    case "ArrowLeft": next = seats[col - 1]; break;
    case "ArrowRight": next = seats[col + 1]; break;
    case "ArrowUp": to = nextRow(row, -1); break;
    case "ArrowDown": to = nextRow(row, 1); break;
    case "PageUp": to = nextRow(row, -10); break;
    case "PageDown": to = nextRow(row, 10); break;
    case "Home":
      next = ev.ctrlKey ? grid().querySelector(SEAT) : seats[0];
      break;
    case "End":
      all = ev.ctrlKey ? grid().querySelectorAll(".seat-row") : null;
      next = all ? rowSeats(all[all.length - 1]) : seats;
      next = next[next.length - 1];
      break;
    default: return;
    }
    if (to && to !== row) {
      var below = rowSeats(to);
      next = below[Math.min(col, below.length - 1)];
    }
    ev.preventDefault();
    if (next) {
      next.focus();
    }
  });

  // A seat chosen loads its panel. Chosen from the keyboard (Enter or
  // Space: a click of detail 0), the focus goes on to the panel's first
  // action, the cancel reason of a held seat, unless the seat went into
  // the counter sale, where the next seat is picked from the grid.
  function sellable(seat) {
    return seat.classList.contains("available") || seat.classList.contains("blocked");
  }

  function focusPanel() {
    var panel = document.getElementById("seat-panel");
    if (!panel) {
      return;
    }
    var first = panel.querySelector("#reason") ||
      panel.querySelector("textarea, input:not([type=hidden]), select, button:not(#panel-close)");
    (first || panel).focus();
  }

  // The seat whose panel is open: a tap does not focus a button in every
  // browser, so the last focused seat is not always the one.
  var opener = "";

  document.addEventListener("click", function (ev) {
    var seat = seatOf(ev.target);
    if (!seat) {
      return;
    }
    opener = seat.id;
    var keyboard = ev.detail === 0;
    var stay = document.getElementById("counter-form") && sellable(seat);
    var loaded = htmx.ajax("GET", grid().getAttribute("data-panel") + encodeURIComponent(seat.id.slice(5)),
      { target: "#seat-panel" });
    if (keyboard && !stay) {
      loaded.then(focusPanel);
    }
  });

  // Closing the panel (its close button, or Esc in it) puts the page's
  // hint back, which on a phone lets the sheet go from over the map, and
  // the focus on the seat that opened it. The hint is kept from the page
  // as served.
  var panelHint = (function () {
    var panel = document.getElementById("seat-panel");
    return panel ? Array.prototype.map.call(panel.childNodes, function (n) { return n.cloneNode(true); }) : [];
  })();

  function closePanel() {
    var panel = document.getElementById("seat-panel");
    if (!panel) {
      return;
    }
    panel.replaceChildren.apply(panel, panelHint.map(function (n) { return n.cloneNode(true); }));
    var seat = (opener && document.getElementById(opener)) || currentSeat();
    if (seat && grid().contains(seat)) {
      seat.focus();
    }
  }

  document.addEventListener("click", function (ev) {
    if (ev.target.closest && ev.target.closest("#panel-close")) {
      closePanel();
    }
  });

  document.addEventListener("keydown", function (ev) {
    if (ev.key === "Escape" && ev.target.closest && ev.target.closest("#seat-panel")) {
      closePanel();
    }
  });

  // Finding. A seat id is matched as typed, then in capitals with the
  // dash put in ("b12" finds B-12); anything else is taken for an order
  // number, whose seats on the map are picked out.
  var found = "", order = "";

  function say(text) {
    var st = document.getElementById("seat-find-status");
    if (st) {
      st.textContent = text;
    }
  }

  function seatById(q) {
    var tries = [q, q.toUpperCase()];
    var m = /^([A-Za-z]+)\s*-?\s*(\d+)$/.exec(q);
    if (m) {
      tries.push(m[1].toUpperCase() + "-" + m[2]);
    }
    for (var i = 0; i < tries.length; i++) {
      var s = document.getElementById("seat-" + tries[i]);
      if (s && seatOf(s)) {
        return s;
      }
    }
    return null;
  }

  function orderSeats(no) {
    return no ? document.querySelectorAll('#seat-grid [data-order="' + CSS.escape(no) + '"]') : [];
  }

  function markFound() {
    var old = document.querySelectorAll("#seat-grid .found");
    for (var i = 0; i < old.length; i++) {
      if (old[i].id !== found) {
        old[i].classList.remove("found");
      }
    }
    var s = found && document.getElementById(found);
    if (s) {
      s.classList.add("found");
    }
  }

  function markOrder() {
    var old = document.querySelectorAll("#seat-grid .in-order");
    for (var i = 0; i < old.length; i++) {
      if (old[i].getAttribute("data-order") !== order) {
        old[i].classList.remove("in-order");
      }
    }
    var seats = orderSeats(order);
    for (var j = 0; j < seats.length; j++) {
      seats[j].classList.add("in-order");
    }
    return seats;
  }

  // reveal scrolls the map's box (not the page, unless the box is out of
  // the window) so the seat is at the box's centre at the zoom it has;
  // if it is still not inside the box, the browser's own scrolling is
  // the fallback.
  function reveal(seat) {
    var box = document.getElementById("seat-scroll");
    if (!box) {
      return;
    }
    var b = box.getBoundingClientRect(), r = seat.getBoundingClientRect();
    box.scrollLeft += r.left + r.width / 2 - (b.left + box.clientLeft + box.clientWidth / 2);
    box.scrollTop += r.top + r.height / 2 - (b.top + box.clientTop + box.clientHeight / 2);
    r = seat.getBoundingClientRect();
    if (r.top < 0 || r.bottom > innerHeight) {
      window.scrollBy(0, r.top + r.height / 2 - innerHeight / 2);
    }
    b = box.getBoundingClientRect();
    r = seat.getBoundingClientRect();
    if (r.left < b.left || r.right > b.right || r.top < b.top || r.bottom > b.bottom) {
      seat.scrollIntoView({ block: "center", inline: "center" });
    }
  }

  function show(seat) {
    seat.focus({ preventScroll: true });
    reveal(seat);
  }

  // where says which section, row and seat a found seat is: the section's
  // name is the heading before its rows, the row's its label, and the
  // seat's number ends its id unless data-n gives it.
  function where(seat, form) {
    var row = seat.closest(".seat-row");
    var label = row.querySelector(".row-label").textContent;
    var id = seat.id.slice(5);
    var n = seat.getAttribute("data-n") || (id.indexOf(label + "-") === 0 ? id.slice(label.length + 1) : id);
    var section = "";
    for (var el = row.previousElementSibling; el; el = el.previousElementSibling) {
      if (el.classList.contains("seat-section")) {
        section = el.textContent;
        break;
      }
    }
    var text = form.getAttribute(section ? "data-seat-found-section" : "data-seat-found");
    return [["%1", id], ["%2", label], ["%3", n], ["%4", section]].reduce(function (t, p) {
      return t.split(p[0]).join(p[1]);
    }, text);
  }

  // highlightOrder picks out an order's seats and brings the first into
  // view; it reports whether the map has any.
  function highlightOrder(no, focusFirst) {
    var form = document.getElementById("seat-find");
    order = no;
    var seats = markOrder();
    if (!seats.length) {
      order = "";
      return false;
    }
    say(form.getAttribute("data-order-found").replace("%s", no).replace("%d", seats.length));
    if (focusFirst) {
      show(seats[0]);
    } else {
      reveal(seats[0]);
    }
    return true;
  }

  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    if (form.id !== "seat-find") {
      return;
    }
    ev.preventDefault();
    var q = document.getElementById("seat-search").value.trim();
    found = "";
    order = "";
    markFound();
    markOrder();
    say("");
    if (!q) {
      return;
    }
    var seat = seatById(q);
    if (seat) {
      found = seat.id;
      markFound();
      show(seat);
      say(where(seat, form));
      return;
    }
    if (!highlightOrder(q, true) && !highlightOrder(q.toUpperCase(), true)) {
      say(form.getAttribute("data-not-found").replace("%s", q));
    }
  });

  document.addEventListener("click", function (ev) {
    var b = ev.target.closest && ev.target.closest("[data-highlight-order]");
    if (b) {
      highlightOrder(b.getAttribute("data-highlight-order"), false);
    }
  });

  // Zoom: the grid's scale, in steps or fitted to the map's width.

  function setZoom(z) {
    var live = document.getElementById("seat-live");
    if (!live) {
      return;
    }
    zoom = Math.min(ZOOMS[ZOOMS.length - 1], Math.max(MIN_ZOOM, z));
    zoomY = Math.max(zoom * (1 + Math.min(1, Math.max(0, (0.25 - zoom) / 0.15)) * (42 / 26 - 1)), 3 / 26);
    live.style.setProperty("--seat-zoom", String(zoom));
    live.style.setProperty("--seat-zoom-y", String(zoomY));
    size();
    var level = document.getElementById("zoom-level");
    if (level) {
      level.textContent = (zoom < 0.1 ? (zoom * 100).toFixed(1) : Math.round(zoom * 100)) + "%";
    }
  }

  function step(dir) {
    var to = ZOOMS.filter(function (z) { return dir > 0 ? z > zoom + 0.001 : z < zoom - 0.001; });
    if (to.length) {
      setZoom(dir > 0 ? to[0] : to[to.length - 1]);
    }
  }

  // fit zooms the plan to the map's width, below the steps if need be
  // (a 200-seat row on a phone).
  function fit() {
    var box = document.getElementById("seat-scroll"), n = natural();
    if (!box || !n || !(n.w > 0)) {
      return;
    }
    setZoom(Math.floor((box.clientWidth - 1) / n.w * 1000) / 1000);
    box.scrollLeft = 0;
  }

  function zoomBy(what) {
    if (what === "in") {
      step(1);
    } else if (what === "out") {
      step(-1);
    } else {
      fit();
    }
  }

  document.addEventListener("click", function (ev) {
    var b = ev.target.closest && ev.target.closest("[data-zoom]");
    if (b) {
      zoomBy(b.getAttribute("data-zoom"));
    }
  });

  // + − 0 zoom from the grid and the zoom buttons (not while typing).
  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey || !ev.target.closest ||
      !(seatOf(ev.target) || ev.target.closest(".seat-zoom"))) {
      return;
    }
    var what = { "+": "in", "=": "in", "-": "out", "0": "fit" }[ev.key];
    if (what) {
      ev.preventDefault();
      var seat = seatOf(ev.target);
      zoomBy(what);
      if (seat) {
        reveal(seat);
      }
    }
  });

  // The stream replaces a seat's button when its state changes, and the
  // whole grid when it reconnects. A replacement button keeps the price
  // category of the one it replaces (the stream does not send it), the
  // focus stays on the seat, and the marks are drawn again.
  var refocus = "";

  document.addEventListener("htmx:oobBeforeSwap", function (ev) {
    var old = ev.detail.target;
    var el = ev.detail.fragment && ev.detail.fragment.firstElementChild;
    if (!old || !el) {
      return;
    }
    if (old.contains(document.activeElement) && seatOf(document.activeElement)) {
      refocus = document.activeElement.id;
    }
    if (seatOf(old) && el.tagName === "BUTTON") {
      for (var i = 0; i < old.classList.length; i++) {
        if (/^c\d$/.test(old.classList[i])) {
          el.classList.add(old.classList[i]);
        }
      }
    }
  });

  // A swapped-in button takes its new attributes only as it settles
  // (htmx keeps the old ones until then), so the marks follow after that.
  document.addEventListener("htmx:oobAfterSwap", function () {
    place(grid());
    var s = refocus && document.getElementById(refocus);
    refocus = "";
    if (s && (document.activeElement === document.body || !document.activeElement)) {
      s.focus({ preventScroll: true });
    }
  });
  document.addEventListener("htmx:afterSettle", function (ev) {
    if (seatOf(ev.target) || ev.target.id === "seat-grid") {
      markFound();
      markOrder();
    }
  });

  place(grid());
})();
