// Live parts of console pages (web/live.go says what the data-live
// attributes mean). The page's event stream is the seat map's when it has
// one (htmx's sse extension owns it; its "change" and "ping" events are
// read here too) and otherwise one of our own on /console/live, so a tab
// holds one stream at most. While the stream is down, or silent for three
// heartbeats, the live parts are greyed out and inert and a banner says
// since when they are stale; once it is back, they are fetched again and
// the banner goes. The body's data-live-state says which: live or stale.
(function () {
  "use strict";

  var meta = document.querySelector('meta[name="live-events"]');
  if (!meta) {
    return;
  }
  var heartbeat = parseInt(meta.getAttribute("data-heartbeat"), 10) || 5000;
  var lastHeard = Date.now();
  var open = false;
  var staleSince = null;
  var own = null;        // our EventSource, on pages without a seat map
  var retry = 1000;      // our reconnect delay after the browser gave up
  var sources = {};      // fetch state by address
  var attached = new WeakSet();

  function parts() {
    return Array.prototype.slice.call(document.querySelectorAll("[data-live]"));
  }

  function srcOf(el) {
    return el.getAttribute("data-live-src") || location.pathname + location.search;
  }

  function stateOf(src) {
    return sources[src] || (sources[src] = { ids: {}, timer: null, running: null, again: false, last: 0, min: 0 });
  }

  // fetchSrc fetches src once and swaps in the elements it was asked for;
  // what is asked for meanwhile waits for the next fetch.
  function fetchSrc(src) {
    var q = stateOf(src);
    if (q.running) {
      q.again = true;
      return q.running;
    }
    var ids = Object.keys(q.ids);
    q.ids = {};
    q.last = Date.now();
    q.running = fetch(src, { headers: { "HX-Request": "true" }, credentials: "same-origin", cache: "no-store" })
      .then(function (r) {
        if (!r.ok) {
          throw new Error("HTTP " + r.status);
        }
        return r.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        ids.forEach(function (id) {
          var cur = document.getElementById(id);
          var next = doc.getElementById(id);
          if (cur && next) {
            next = document.importNode(next, true);
            cur.replaceWith(next);
            htmx.process(next);
            if (staleSince) {
              mark(next, true);
            }
          }
        });
        document.dispatchEvent(new CustomEvent("live:refreshed"));
      })
      .catch(function (err) {
        ids.forEach(function (id) { q.ids[id] = true; }); // the next round takes them
        throw err;
      })
      .finally(function () {
        q.running = null;
        if (q.again) {
          q.again = false;
          schedule(src);
        }
      });
    return q.running;
  }

  // schedule fetches src soon: changes that come together share a fetch,
  // and a part with data-live-min is fetched at most that often.
  function schedule(src) {
    var q = stateOf(src);
    if (q.timer) {
      return;
    }
    var wait = Math.max(50, q.last + q.min - Date.now());
    q.timer = setTimeout(function () {
      q.timer = null;
      fetchSrc(src).catch(function () {});
    }, wait);
  }

  function want(el) {
    var q = stateOf(srcOf(el));
    q.ids[el.id] = true;
    q.min = parseInt(el.getAttribute("data-live-min"), 10) || 0;
    return q;
  }

  function refreshable(el) {
    return el.id && el.getAttribute("data-live") !== "";
  }

  function onChange(ev) {
    heard();
    var ch;
    try {
      ch = JSON.parse(ev.data);
    } catch (e) {
      return;
    }
    var keys = { "*": true };
    keys["show:" + ch.show] = true;
    if (ch.order) {
      keys["order:" + ch.order] = true;
    }
    (ch.seats || []).forEach(function (s) { keys["seat:" + ch.show + ":" + s] = true; });
    parts().forEach(function (el) {
      if (refreshable(el) && el.getAttribute("data-live").split(/\s+/).some(function (k) { return keys[k]; })) {
        want(el);
        schedule(srcOf(el));
      }
    });
  }

  function mark(el, stale) {
    el.classList.toggle("stale", stale);
    el.inert = stale;
    if (stale) {
      el.setAttribute("aria-disabled", "true");
    } else {
      el.removeAttribute("aria-disabled");
    }
  }

  function clock(d, zone) {
    try {
      return d.toLocaleTimeString("en-GB", { timeZone: zone, hour12: false });
    } catch (e) {
      return d.toLocaleTimeString("en-GB", { hour12: false });
    }
  }

  function goStale(since) {
    if (staleSince) {
      return;
    }
    staleSince = since;
    document.body.setAttribute("data-live-state", "stale");
    parts().forEach(function (el) { mark(el, true); });
    var banner = document.getElementById("stale-notice");
    if (banner) {
      banner.textContent = banner.getAttribute("data-text").replace("%s", clock(since, banner.getAttribute("data-zone")));
      banner.hidden = false;
    }
  }

  function goLive() {
    staleSince = null;
    document.body.setAttribute("data-live-state", "live");
    parts().forEach(function (el) { mark(el, false); });
    var banner = document.getElementById("stale-notice");
    if (banner) {
      banner.hidden = true;
    }
  }

  function heard() {
    lastHeard = Date.now();
  }

  function onOpen() {
    heard();
    open = true;
    retry = 1000;
    if (!staleSince) {
      document.body.setAttribute("data-live-state", "live");
      return;
    }
    // Whatever changed while the stream was down: fetch every part again
    // before saying the page is live.
    var srcs = {};
    parts().filter(refreshable).forEach(function (el) {
      want(el);
      srcs[srcOf(el)] = true;
    });
    Promise.all(Object.keys(srcs).map(fetchSrc)).then(function () {
      if (open) {
        goLive();
      }
    }, function () {});
  }

  // onError: a stream the server ends on purpose (a resync, a deploy)
  // comes back within a second or so; only a longer gap is stale.
  function onError() {
    open = false;
    var since = new Date(lastHeard);
    setTimeout(function () {
      if (!open) {
        goStale(since);
      }
    }, 1500);
  }

  function connect() {
    own = new EventSource(meta.getAttribute("content"));
    own.addEventListener("open", onOpen);
    own.addEventListener("change", onChange);
    own.addEventListener("ping", heard);
    own.addEventListener("error", function () {
      onError();
      if (own.readyState === EventSource.CLOSED) {
        // The browser gave up (an error status, a login page): try again.
        own = null;
        setTimeout(connect, retry);
        retry = Math.min(retry * 2, 30000);
      }
    });
  }

  // The seat map's stream, opened and reopened by the sse extension.
  document.addEventListener("htmx:sseOpen", function (ev) {
    var src = ev.detail && ev.detail.source;
    if (src && !attached.has(src)) {
      attached.add(src);
      src.addEventListener("change", onChange);
      src.addEventListener("ping", heard);
      src.addEventListener("seats", heard);
    }
    onOpen();
  });
  document.addEventListener("htmx:sseError", onError);

  // A silent stream is as stale as a broken one (a hung server or proxy).
  setInterval(function () {
    if (open && Date.now() - lastHeard > 3 * heartbeat) {
      open = false;
      goStale(new Date(lastHeard));
      if (own) {
        own.close();
        own = null;
        connect();
      }
    }
    if (staleSince) {
      return;
    }
    parts().forEach(function (el) {
      var every = parseInt(el.getAttribute("data-live-every"), 10);
      if (every > 0 && refreshable(el) && Date.now() - stateOf(srcOf(el)).last >= every) {
        want(el);
        schedule(srcOf(el));
      }
    });
  }, 1000);

  document.addEventListener("DOMContentLoaded", function () {
    sources = {};
    parts().forEach(function (el) { stateOf(srcOf(el)).last = Date.now(); });
    if (!document.querySelector("[sse-connect]") && parts().length > 0) {
      connect();
    }
  });
})();
