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
  var STATES = ["available", "locked", "sold", "blocked"];

  // zoom is the plan's scale across; zoomY, its scale down, is the same
  // but below a quarter (seat labels too small to read), where the plan
  // is drawn taller, up to the seats' being square at a tenth (42 × 26 px
  // at zoom 1, seatmap.css): a seat of a 200-seat row on a phone is a dot
  // to be hit, not a sliver one pixel high; and never under 3 px high,
  // twice the pixel the browser may round its place by.
  var zoom = 1, zoomY = 1;

  function grid() { return document.getElementById("seat-grid"); }
  function seatOf(el) { return el && el.closest ? el.closest(SEAT) : null; }

  // The plan as data: the server sends each run's seats as data-s
  // (web/seatgrid.go), not as buttons, and the seat buttons are made here,
  // those in view before the first frame, the rest when the browser is
  // idle, and any seat wanted sooner (found, reached by key) at once.
  // model.rows hold each row's box and runs, model.byId each seat's
  // state, which the stream keeps up to date whether or not its button
  // is made yet. Boxes are in pixels at zoom 1.
  var model = null;

  function boxOf(el) { return el.getAttribute("data-b").split(",").map(Number); }

  // setBox draws an element where the plan puts it (data-b: left, top,
  // width and height in pixels at zoom 1, a 0 size left to seatmap.css;
  // web/seatplan.go). The console's CSP forbids style attributes, not
  // styles set from script.
  function setBox(el, b) {
    var st = el.style;
    st.left = b[0] + "px";
    st.top = b[1] + "px";
    if (b[2]) {
      st.width = b[2] + "px";
    }
    if (b[3]) {
      st.height = b[3] + "px";
    }
  }

  // place draws the grid's rows, runs, labels and section names and reads
  // the plan's seats into the model. The stream's fresh grid is placed as
  // it comes in.
  function place(g) {
    if (!g) {
      return;
    }
    if (model && model.grid === g) {
      // htmx gives a grid the stream swapped in the old one's class and
      // style first and its own only as it settles: drawn again then.
      if (!g.classList.contains("placed")) {
        setBox(g, boxOf(g));
        g.classList.add("placed");
        size();
      }
      return;
    }
    var m = { grid: g, rows: [], runs: [], byId: Object.create(null), rowOf: new WeakMap(), next: 0 };
    var section = "";
    setBox(g, boxOf(g));
    for (var el = g.firstElementChild; el; el = el.nextElementSibling) {
      var b = boxOf(el);
      setBox(el, b);
      if (el.classList.contains("seat-section")) {
        section = el.textContent;
        continue;
      }
      var row = { el: el, x: b[0], y: b[1], w: b[2], h: b[3], section: section, runs: [] };
      for (var r = el.firstElementChild; r; r = r.nextElementSibling) {
        if (!r.classList.contains("seat-run")) {
          row.label = r.textContent;
          if (r.hasAttribute("data-b")) {
            setBox(r, boxOf(r));
          }
          continue;
        }
        var rb = boxOf(r);
        setBox(r, rb);
        var run = { el: r, row: row, x: row.x + rb[0], y: row.y + rb[1], w: rb[2], built: false, seats: [] };
        var data = JSON.parse(r.getAttribute("data-s"));
        r.removeAttribute("data-s");
        for (var i = 0; i < data.length; i++) {
          var d = data[i];
          var s = { id: d[0], st: d[1], cat: d[2] || "", order: d[3] || "", n: d[4] || 0, run: run };
          run.seats.push(s);
          m.byId[s.id] = s;
        }
        row.runs.push(run);
        m.runs.push(run);
      }
      m.rows.push(row);
      m.rowOf.set(el, row);
    }
    model = m;
    g.classList.add("placed");
    size();
    buildVisible();
    overview.plan(m);
    idle(buildIdle.bind(null, m));
  }

  // button makes a seat's button, as web.Seat writes it, with the marks
  // the page has put on it.
  function button(s) {
    var b = document.createElement("button");
    b.id = "seat-" + s.id;
    b.className = s.st + (s.cat ? " " + s.cat : "") + (b.id === found ? " found" : "") +
      (order && s.order === order ? " in-order" : "");
    if (s.n) {
      b.setAttribute("data-n", s.n);
    }
    if (s.order) {
      b.setAttribute("data-order", s.order);
    }
    b.textContent = s.id;
    return b;
  }

  function build(run) {
    if (run.built) {
      return false;
    }
    run.built = true;
    var f = document.createDocumentFragment();
    for (var i = 0; i < run.seats.length; i++) {
      f.appendChild(button(run.seats[i]));
    }
    run.el.appendChild(f);
    return true;
  }

  // built tells the page's other scripts (console.js marks the counter's
  // picked seats) that seat buttons were made.
  function built(any) {
    if (any && model) {
      model.grid.dispatchEvent(new CustomEvent("seatmap:built", { bubbles: true }));
    }
  }

  function buildRow(row) {
    var any = false;
    for (var i = 0; row && i < row.runs.length; i++) {
      any = build(row.runs[i]) || any;
    }
    built(any);
  }

  // ensureRow makes a row element's seat buttons, if they are not yet.
  function ensureRow(el) {
    if (model && el) {
      buildRow(model.rowOf.get(el));
    }
    return el;
  }

  // seatEl is the button of seat id, made if need be, or null.
  function seatEl(id) {
    var s = model && model.byId[id];
    if (s) {
      built(build(s.run));
    }
    return s ? document.getElementById("seat-" + id) : null;
  }

  // viewRect is the part of the plan the map's box shows inside the
  // window, grown by margin screen pixels each way, in plan pixels.
  function viewRect(margin) {
    var box = document.getElementById("seat-scroll");
    if (!model || !box) {
      return null;
    }
    var gr = model.grid.getBoundingClientRect(), br = box.getBoundingClientRect();
    var l = Math.max(br.left + box.clientLeft, 0) - margin, t = Math.max(br.top + box.clientTop, 0) - margin;
    var r = Math.min(br.left + box.clientLeft + box.clientWidth, innerWidth) + margin;
    var b = Math.min(br.top + box.clientTop + box.clientHeight, innerHeight) + margin;
    return { x0: (l - gr.left) / zoom, x1: (r - gr.left) / zoom, y0: (t - gr.top) / zoomY, y1: (b - gr.top) / zoomY };
  }

  // buildVisible makes the buttons of the runs in view, and a little
  // around it, so a short scroll finds them made.
  function buildVisible() {
    var v = viewRect(300), any = false;
    if (!v) {
      return;
    }
    for (var i = 0; i < model.rows.length; i++) {
      var row = model.rows[i];
      if (row.y > v.y1 || row.y + row.h < v.y0 || row.x > v.x1 || row.x + row.w < v.x0) {
        continue;
      }
      for (var j = 0; j < row.runs.length; j++) {
        var run = row.runs[j];
        if (run.x <= v.x1 && run.x + run.w >= v.x0 && run.y <= v.y1 && run.y + 26 >= v.y0) {
          any = build(run) || any;
        }
      }
    }
    built(any);
  }

  // idle runs f when the browser has nothing else to do; Safari has no
  // requestIdleCallback, and gets a slice of 8 ms per task.
  var idle = window.requestIdleCallback ? window.requestIdleCallback.bind(window) : function (f) {
    setTimeout(function () {
      var end = performance.now() + 8;
      f({ timeRemaining: function () { return end - performance.now(); } });
    }, 16);
  };

  // buildIdle makes the buttons of the runs still without them, a few at
  // a time, until the grid (m) has all of them or is replaced.
  function buildIdle(m, deadline) {
    var any = false;
    while (model === m && m.next < m.runs.length && deadline.timeRemaining() > 2) {
      any = build(m.runs[m.next++]) || any;
    }
    built(any);
    if (model === m && m.next < m.runs.length) {
      idle(buildIdle.bind(null, m));
    }
  }

  // learn takes a stream's seat button (web.Seat) into the model, and the
  // overview's counts.
  function learn(el) {
    var s = el && el.tagName === "BUTTON" && model && model.byId[el.id.slice(5)];
    if (!s) {
      return;
    }
    var st = STATES.filter(function (c) { return el.classList.contains(c); })[0] || s.st;
    overview.change(s, st);
    s.st = st;
    s.order = el.getAttribute("data-order") || "";
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
    return g && s && g.contains(s) ? s : g && ensureRow(g.querySelector(".seat-row")) && g.querySelector(SEAT);
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

  function rowSeats(row) { return ensureRow(row).querySelectorAll("button"); }

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
        var rows = grid().querySelectorAll(".seat-row");
        var ends = rowSeats(rows[ev.shiftKey ? 0 : rows.length - 1]);
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
      next = ev.ctrlKey ? rowSeats(grid().querySelector(".seat-row"))[0] : seats[0];
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
      var s = seatEl(tries[i]);
      if (s) {
        return s;
      }
    }
    return null;
  }

  function orderSeats(no) {
    if (!no) {
      return [];
    }
    var any = false;
    for (var id in model ? model.byId : {}) {
      if (model.byId[id].order === no) {
        any = build(model.byId[id].run) || any;
      }
    }
    built(any);
    return document.querySelectorAll('#seat-grid [data-order="' + CSS.escape(no) + '"]');
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
    buildVisible();
    overview.view();
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
    learn(el);
    if (seatOf(old) && el.tagName === "BUTTON") {
      for (var i = 0; i < old.classList.length; i++) {
        if (/^c\d$/.test(old.classList[i])) {
          el.classList.add(old.classList[i]);
        }
      }
    }
  });

  // A seat whose button is not made yet: the model takes the change, and
  // the button will be made with it.
  document.addEventListener("htmx:oobErrorNoTarget", function (ev) { learn(ev.detail.content); });

  // A swapped-in button takes its new attributes only as it settles
  // (htmx keeps the old ones until then), so the marks follow after that.
  document.addEventListener("htmx:oobAfterSwap", function () {
    place(grid());
    var s = refocus && seatEl(refocus.slice(5));
    refocus = "";
    if (s && (document.activeElement === document.body || !document.activeElement)) {
      s.focus({ preventScroll: true });
    }
  });
  document.addEventListener("htmx:afterSettle", function (ev) {
    if (ev.target.id === "seat-grid") {
      place(ev.target);
    }
    if (seatOf(ev.target) || ev.target.id === "seat-grid") {
      markFound();
      markOrder();
    }
  });

  // The overview (issue 31): the whole plan small, each seat a dot in its
  // state's colour, with the part the map's box shows drawn over it, and
  // beside it a button per area (a section's rows, at most AREA_ROWS of
  // them, a long section cut into even blocks) naming its rows and how
  // many of its seats are free, with a bar of its states' shares. An
  // area's button, or a click on the small plan, brings that part into
  // the map's box. The counts follow the stream (learn). A plan of one
  // area has no overview.
  var AREA_ROWS = 10;
  var COLOURS = { available: "#12b76a", locked: "#f79009", sold: "#344054", blocked: "#98a2b3" };

  var overview = (function () {
    var m = null, areas = [], scale = 1, drawn = false, dirty = false;

    function el(id) { return document.getElementById(id); }

    function fill(t, vals) {
      return vals.reduce(function (acc, v, i) { return acc.split("%" + (i + 1)).join(v); }, t);
    }

    function makeAreas() {
      var out = [], rows = m.rows;
      for (var i = 0; i < rows.length;) {
        var j = i + 1;
        while (j < rows.length && rows[j].section === rows[i].section) {
          j++;
        }
        var size = Math.ceil((j - i) / Math.ceil((j - i) / AREA_ROWS));
        for (var a = i; a < j; a += size) {
          out.push(area(rows.slice(a, Math.min(a + size, j))));
        }
        i = j;
      }
      return out;
    }

    function area(rows) {
      var a = { rows: rows, count: { available: 0, locked: 0, sold: 0, blocked: 0 }, total: 0,
        x0: Infinity, y0: Infinity, x1: 0, y1: 0 };
      rows.forEach(function (row) {
        a.x0 = Math.min(a.x0, row.x);
        a.y0 = Math.min(a.y0, row.y);
        a.x1 = Math.max(a.x1, row.x + row.w);
        a.y1 = Math.max(a.y1, row.y + row.h);
        row.runs.forEach(function (run) {
          run.seats.forEach(function (s) {
            s.area = a;
            a.count[s.st] = (a.count[s.st] || 0) + 1;
            a.total++;
          });
        });
      });
      return a;
    }

    // label writes an area's button: its rows (and section), its free
    // seats, and the bar of its states.
    function label(a) {
      var box = el("seat-overview"), first = a.rows[0].label, last = a.rows[a.rows.length - 1].label;
      var rows = first === last ? fill(box.getAttribute("data-row"), [first]) : fill(box.getAttribute("data-rows"), [first, last]);
      a.name.textContent = (a.rows[0].section ? a.rows[0].section + " · " : "") + rows;
      a.free.textContent = fill(box.getAttribute("data-free"), [a.count.available, a.total]);
      var at = 0, stops = [];
      STATES.forEach(function (st) {
        var to = at + 100 * a.count[st] / Math.max(a.total, 1);
        stops.push(COLOURS[st] + " " + at.toFixed(2) + "% " + to.toFixed(2) + "%");
        at = to;
      });
      a.bar.style.background = "linear-gradient(to right, " + stops.join(", ") + ")";
    }

    function plan(model) {
      m = model;
      var box = el("seat-overview");
      if (!box) {
        return;
      }
      areas = makeAreas();
      box.hidden = areas.length < 2;
      var list = el("overview-areas");
      list.replaceChildren();
      if (box.hidden) {
        return;
      }
      areas.forEach(function (a, i) {
        var b = document.createElement("button");
        b.type = "button";
        b.className = "secondary overview-area";
        b.id = "overview-area-" + (i + 1);
        b.setAttribute("data-overview-area", i);
        a.name = b.appendChild(document.createElement("span"));
        a.name.className = "area-name";
        b.appendChild(document.createTextNode(" "));
        a.free = b.appendChild(document.createElement("span"));
        a.free.className = "area-free";
        a.bar = b.appendChild(document.createElement("span"));
        a.bar.className = "area-bar";
        a.bar.setAttribute("aria-hidden", "true");
        label(a);
        list.appendChild(b);
      });
      draw();
    }

    // draw paints the small plan: each seat a dot in its state's colour,
    // one path per state.
    function draw() {
      var c = el("overview-plan"), n = natural();
      if (!c || !n || el("seat-overview").hidden) {
        return;
      }
      var w = c.parentElement.clientWidth, dpr = window.devicePixelRatio || 1;
      scale = Math.min(w / n.w, 180 / n.h);
      c.width = Math.ceil(n.w * scale * dpr);
      c.height = Math.ceil(n.h * scale * dpr);
      c.style.width = Math.ceil(n.w * scale) + "px";
      c.style.height = Math.ceil(n.h * scale) + "px";
      var ctx = c.getContext("2d"), k = scale * dpr;
      var sw = Math.max(42 * k, 1), sh = Math.max(26 * k, 1);
      ctx.clearRect(0, 0, c.width, c.height);
      STATES.forEach(function (st) {
        ctx.beginPath();
        m.runs.forEach(function (run) {
          for (var i = 0; i < run.seats.length; i++) {
            if (run.seats[i].st === st) {
              ctx.rect((run.x + 46 * i) * k, run.y * k, sw, sh);
            }
          }
        });
        ctx.fillStyle = COLOURS[st];
        ctx.fill();
      });
      drawn = true;
      view();
    }

    // view draws the rectangle of the part of the plan the map's box shows.
    function view() {
      var v = drawn && viewRect(0), r = el("overview-view"), n = natural();
      if (!v || !r || !n) {
        return;
      }
      var x0 = Math.max(v.x0, 0), y0 = Math.max(v.y0, 0), x1 = Math.min(v.x1, n.w), y1 = Math.min(v.y1, n.h);
      r.hidden = x1 <= x0 || y1 <= y0;
      r.style.left = x0 * scale + "px";
      r.style.top = y0 * scale + "px";
      r.style.width = Math.max((x1 - x0) * scale, 2) + "px";
      r.style.height = Math.max((y1 - y0) * scale, 2) + "px";
    }

    // change counts a seat's new state st; the overview is drawn again
    // once per frame however many seats change.
    function change(s, st) {
      if (!s.area || s.st === st) {
        return;
      }
      s.area.count[s.st]--;
      s.area.count[st]++;
      s.area.dirty = true;
      if (!dirty) {
        dirty = true;
        requestAnimationFrame(function () {
          dirty = false;
          areas.forEach(function (a) {
            if (a.dirty && a.name) {
              a.dirty = false;
              label(a);
            }
          });
          draw();
        });
      }
    }

    // go scrolls the map's box so plan point (x, y) is at its centre, and
    // the page so that point is in the window.
    function go(x, y) {
      var box = el("seat-scroll");
      if (!box || !m) {
        return;
      }
      var gr = m.grid.getBoundingClientRect(), br = box.getBoundingClientRect();
      box.scrollLeft += gr.left + x * zoom - (br.left + box.clientLeft + box.clientWidth / 2);
      box.scrollTop += gr.top + y * zoomY - (br.top + box.clientTop + box.clientHeight / 2);
      gr = m.grid.getBoundingClientRect();
      var cy = gr.top + y * zoomY;
      if (cy < 0 || cy > innerHeight) {
        window.scrollBy(0, cy - innerHeight / 2);
      }
      buildVisible();
      view();
    }

    // An area's button brings its middle into the box, or its top rows
    // when it is taller than the box.
    document.addEventListener("click", function (ev) {
      var b = ev.target.closest && ev.target.closest("[data-overview-area]");
      var a = b && areas[+b.getAttribute("data-overview-area")];
      if (a) {
        var box = el("seat-scroll");
        go((a.x0 + a.x1) / 2, a.y0 + Math.min(a.y1 - a.y0, box.clientHeight / zoomY) / 2);
      }
      var c = ev.target.id === "overview-plan" && ev.target;
      if (c) {
        go(ev.offsetX / scale, ev.offsetY / scale);
      }
    });

    return { plan: plan, change: change, view: view, draw: draw };
  })();

  // Scrolling the map or the page, or a new window size: the seats come
  // into view made, and the overview's rectangle follows, once a frame.
  var moved = false;
  function onMove() {
    if (!moved) {
      moved = true;
      requestAnimationFrame(function () {
        moved = false;
        buildVisible();
        overview.view();
      });
    }
  }
  document.addEventListener("scroll", onMove, { capture: true, passive: true });
  window.addEventListener("resize", function () {
    onMove();
    overview.draw();
  });

  place(grid());
})();
