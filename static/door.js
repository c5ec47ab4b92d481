// The gate's scan page (web/door.templ): scans answered in place, the
// answer's sound, the camera, and offline scanning. A gate that downloaded
// its show's ticket list keeps scanning when the connection drops: it
// decides from the list (codes only as salted SHA-256 hashes), remembers
// what it admitted, and sends those scans to the server (/door/sync) once
// the connection is back, where a ticket admitted twice becomes a
// double_entry case. The list and the waiting scans live in localStorage,
// so a closed tab loses neither; the page itself cannot load without the
// server, so a gate does not reload it offline.
(function () {
  "use strict";

  // The answer is heard as well as seen, so a gate need not look at the
  // screen between two scans: one high tone for admitted, two low ones for
  // a refusal (Web Audio; no file to fetch, nothing if the browser has none).
  var audio = null; // one context for the page: browsers cap how many live

  function sound(ok) {
    var Ctx = window.AudioContext || window.webkitAudioContext;
    if (!Ctx) {
      return;
    }
    try {
      audio = audio || new Ctx();
    } catch (e) {
      return; // no sound is no reason to lose the answer
    }
    var ctx = audio;
    if (ctx.state === "suspended" && ctx.resume) {
      // Allowed once the gate has used the page (a scan is a key press).
      ctx.resume().catch(function () {});
    }
    var tones = ok ? [[880, 0, 0.15]] : [[220, 0, 0.18], [220, 0.25, 0.18]];
    for (var i = 0; i < tones.length; i++) {
      var osc = ctx.createOscillator();
      var gain = ctx.createGain();
      osc.frequency.value = tones[i][0];
      gain.gain.value = 0.2;
      osc.connect(gain);
      gain.connect(ctx.destination);
      osc.start(ctx.currentTime + tones[i][1]);
      osc.stop(ctx.currentTime + tones[i][1] + tones[i][2]);
    }
  }

  function soundOfAnswer() {
    var el = document.querySelector("[data-door-sound]");
    if (el) {
      sound(el.getAttribute("data-door-sound") === "ok");
    }
  }

  // SHA-256 of a string's UTF-8 bytes, in hex: crypto.subtle exists only
  // in secure contexts, and a venue's gates may reach the console over
  // plain http on its own network.
  var K = [0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2];

  function rotr(x, n) {
    return (x >>> n) | (x << (32 - n));
  }

  function sha256hex(str) {
    var bytes = new TextEncoder().encode(str);
    var total = Math.ceil((bytes.length + 9) / 64) * 64;
    var m = new Uint8Array(total);
    m.set(bytes);
    m[bytes.length] = 0x80;
    var bits = bytes.length * 8;
    for (var b = 0; b < 4; b++) {
      m[total - 1 - b] = (bits >>> (8 * b)) & 255;
    }
    var h = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
    var w = new Array(64);
    for (var off = 0; off < total; off += 64) {
      var i;
      for (i = 0; i < 16; i++) {
        var j = off + 4 * i;
        w[i] = ((m[j] << 24) | (m[j + 1] << 16) | (m[j + 2] << 8) | m[j + 3]) >>> 0;
      }
      for (i = 16; i < 64; i++) {
        var s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
        var s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
        w[i] = (w[i - 16] + s0 + w[i - 7] + s1) >>> 0;
      }
      var a = h[0], bb = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
      for (i = 0; i < 64; i++) {
        var t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i]) >>> 0;
        var t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & bb) ^ (a & c) ^ (bb & c))) >>> 0;
        hh = g;
        g = f;
        f = e;
        e = (d + t1) >>> 0;
        d = c;
        c = bb;
        bb = a;
        a = (t1 + t2) >>> 0;
      }
      var add = [a, bb, c, d, e, f, g, hh];
      for (i = 0; i < 8; i++) {
        h[i] = (h[i] + add[i]) >>> 0;
      }
    }
    return h.map(function (x) { return ("0000000" + x.toString(16)).slice(-8); }).join("");
  }

  var root, form, codeField, gateField, texts, alphabet, codeLen, seatCodeLen;
  var store = { list: null, index: {}, local: {}, queue: [], sent: {} };
  var LIST_MAX_AGE = 36 * 3600 * 1000; // a list is forgotten after its show
  var online = navigator.onLine !== false;
  var KEY = "seatflow.door";

  // fmt fills Go verbs (%s, %d, %[n]d) as the catalog writes them.
  function fmt(key, args) {
    var next = 0;
    return (texts[key] || key).replace(/%(?:\[(\d+)\])?[sd]/g, function (_, n) {
      var at = n ? Number(n) - 1 : next;
      next = at + 1;
      return String(args[at]);
    });
  }

  // normalize is core.NormalizeTicketCode: upper case, no dashes, I and L
  // read as 1, O as 0; "" when not an order's or a seat's code.
  function normalize(code) {
    var s = code.trim().replace(/-/g, "").toUpperCase().replace(/[IL]/g, "1").replace(/O/g, "0");
    if (s.length !== codeLen && s.length !== seatCodeLen) {
      return "";
    }
    for (var i = 0; i < s.length; i++) {
      if (alphabet.indexOf(s[i]) < 0) {
        return "";
      }
    }
    return s;
  }

  function hashOf(code) {
    return sha256hex(store.list.salt + code).slice(0, 32);
  }

  function load() {
    var saved = stored();
    if (saved.list) {
      store.list = saved.list;
      store.local = saved.local || {};
      store.showName = saved.showName || "";
    }
    store.queue = saved.queue || [];
    // A list a day and a half old is forgotten once its scans are sent:
    // a device lost after the show holds no codes to try.
    if (store.list && !store.queue.length && Date.now() - new Date(store.list.generated_at).getTime() > LIST_MAX_AGE) {
      store.list = null;
      store.local = {};
      save();
    }
    reindex();
  }

  function stored() {
    try {
      return JSON.parse(localStorage.getItem(KEY) || "null") || {};
    } catch (e) {
      return {}; // a corrupt entry is no list: the gate downloads again
    }
  }

  // save writes the list and the scans, merged with what another tab of
  // this gate wrote meanwhile (its scans are kept unless this tab sent
  // them), so two tabs do not erase each other's scans.
  function save() {
    var saved = stored();
    var have = {};
    store.queue.forEach(function (q) { have[q.id] = true; });
    (saved.queue || []).forEach(function (q) {
      if (!have[q.id] && !store.sent[q.id]) {
        store.queue.push(q);
      }
    });
    if (store.list && saved.list && saved.list.salt === store.list.salt) {
      Object.keys(saved.local || {}).forEach(function (h) {
        var mine = store.local[h] || { seats: [], at: saved.local[h].at };
        saved.local[h].seats.forEach(function (seat) {
          if (mine.seats.indexOf(seat) < 0) {
            mine.seats.push(seat);
          }
        });
        store.local[h] = mine;
      });
    }
    try {
      localStorage.setItem(KEY, JSON.stringify({ list: store.list, showName: store.showName, local: store.local, queue: store.queue }));
      var el = document.getElementById("door-offline-error");
      if (el && el.textContent === texts["door.offline.storage"]) {
        storageError(""); // room again; a refused sync stays said
      }
    } catch (e) {
      storageError(texts["door.offline.storage"]); // full: the scans live in this page only
    }
  }

  function storageError(text) {
    var el = document.getElementById("door-offline-error");
    if (el) {
      el.textContent = text;
    }
  }

  // reindex maps each code's hash to its order's ticket t and, for a
  // seat's own code, the one seat it admits (seat "": all of t's). The
  // admissions are kept by order (store.local[t.hash]), whichever code
  // let a seat in.
  function reindex() {
    store.index = {};
    if (!store.list) {
      return;
    }
    store.list.tickets.forEach(function (t) {
      store.index[t.hash] = { t: t, seat: "" };
      (t.seat_codes || []).forEach(function (c) {
        store.index[c.hash] = { t: t, seat: c.seat };
      });
    });
  }

  function timeOf(iso) {
    return new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  }

  function render() {
    var status = document.getElementById("door-offline-status");
    var queue = document.getElementById("door-offline-queue");
    root.classList.toggle("offline", !online);
    document.body.classList.toggle("door-is-offline", !online);
    if (!store.list) {
      status.textContent = texts["door.offline.none"];
    } else if (online) {
      status.textContent = fmt("door.offline.ready", [store.showName, timeOf(store.list.generated_at), store.list.tickets.length]);
    } else {
      var age = Math.floor((Date.now() - new Date(store.list.generated_at).getTime()) / 60000);
      status.textContent = fmt("door.offline.offline", [store.showName, timeOf(store.list.generated_at), age]);
    }
    queue.textContent = store.queue.length ? fmt("door.offline.waiting", [store.queue.length]) : "";
  }

  function setOnline(yes) {
    if (online !== yes) {
      online = yes;
      render();
    }
    if (yes) {
      sync();
    }
  }

  function randomID() {
    var b = new Uint8Array(8);
    crypto.getRandomValues(b);
    return Array.prototype.map.call(b, function (x) { return ("0" + x.toString(16)).slice(-2); }).join("");
  }

  // decide answers a scan from the list and queues what it admitted.
  function decide(raw, gate, id) {
    var code = normalize(raw);
    var hit = code && store.index[hashOf(code)];
    if (!hit) {
      return { result: "not_valid", reason: "unknown_code" };
    }
    var t = hit.t;
    if (t.state !== "valid") {
      return { result: "not_valid", reason: t.state };
    }
    var h = t.hash;
    var mine = store.local[h] || { seats: [], at: "" };
    var done = (t.admitted || []).concat(mine.seats);
    var asked = hit.seat ? [hit.seat] : t.seats;
    var left = asked.filter(function (s) { return done.indexOf(s) < 0; });
    if (!left.length) {
      var here = asked.some(function (s) { return mine.seats.indexOf(s) >= 0; });
      return { result: "already_checked_in", seats: asked, here: here ? mine.at : "" };
    }
    var at = new Date().toISOString();
    store.local[h] = { seats: mine.seats.concat(left), at: at };
    store.queue.push({ id: id, code: code, at: at, seat_ids: left, gate: gate });
    save();
    return { result: "admitted", seats: left, count: done.length + left.length, of: t.seats.length };
  }

  // remember notes a ticket the server admitted while online, so the
  // list knows it if the connection drops later.
  function remember(code, seats) {
    code = normalize(code || "");
    var hit = code && store.list && store.index[hashOf(code)];
    if (!hit || !seats.length) {
      return;
    }
    var t = hit.t;
    var mine = store.local[t.hash] || { seats: [], at: "" };
    store.local[t.hash] = { seats: mine.seats.concat(seats), at: new Date().toISOString() };
    save();
  }

  function show(answer) {
    var box = document.getElementById("door-answer");
    var div = document.createElement("div");
    div.id = "door-result";
    div.setAttribute("role", "status");
    div.className = "door-result " + (answer.result === "admitted" ? "ok" : "refused");
    var lines = [texts["door.result." + answer.result]];
    if (answer.reason) {
      lines.push(texts["door.reason." + answer.reason] || answer.reason);
    }
    if (answer.seats && answer.seats.length) {
      lines.push(fmt("door.seats", [answer.seats.join(", ")]));
    }
    if (answer.result === "admitted") {
      lines.push(fmt("door.count", [answer.count, answer.of]));
    }
    if (answer.result === "already_checked_in") {
      lines.push(answer.here ? fmt("door.offline.first_here", [timeOf(answer.here)]) : texts["door.offline.first_list"]);
    }
    lines.push(texts["door.offline.decided"]);
    lines.forEach(function (text, i) {
      var p = document.createElement("p");
      if (i === 0) {
        p.className = "door-verdict";
      }
      p.textContent = text;
      div.appendChild(p);
    });
    box.replaceChildren(div);
    sound(answer.result === "admitted");
  }

  // swap puts the server's answer (the scan page it rendered) in place.
  function swap(html) {
    var doc = new DOMParser().parseFromString(html, "text/html");
    var answer = doc.getElementById("door-answer");
    if (!answer) {
      return false;
    }
    document.getElementById("door-answer").replaceWith(answer);
    var counts = doc.getElementById("door-counts");
    var mine = document.getElementById("door-counts");
    if (counts && mine) {
      mine.replaceWith(counts);
    } else if (counts) {
      form.after(counts);
    }
    if (counts && window.htmx) {
      window.htmx.process(counts);
    }
    var result = document.getElementById("door-result");
    if (result && result.getAttribute("data-result") === "admitted") {
      remember(result.getAttribute("data-code"), result.getAttribute("data-seats").split(" "));
    }
    soundOfAnswer();
    return true;
  }

  function offlineScan(code, gate, id) {
    setOnline(false);
    show(decide(code, gate, id));
    codeField.value = "";
    codeField.focus();
    render();
  }

  // unchecked says a scan could not be checked: no server, no list.
  function unchecked() {
    setOnline(false);
    var div = document.createElement("div");
    div.id = "door-result";
    div.setAttribute("role", "status");
    div.className = "door-result refused";
    div.textContent = texts["door.offline.unchecked"];
    document.getElementById("door-answer").replaceChildren(div);
    sound(false);
  }

  // scan sends the scan to the server and shows its answer in place (the
  // page, and the camera, stay); offline, or when the server does not
  // answer within 4 s, the list decides.
  function scan(ev) {
    ev.preventDefault();
    // The scan's id goes with it: when no answer comes and the list
    // decides, the scan sent later under the same id finds its own
    // admission, if the server made it, not a double entry.
    var id = randomID();
    var code = codeField.value, gate = gateField.value.trim();
    if (!online && store.list) {
      offlineScan(code, gate, id);
      return;
    }
    var body = new URLSearchParams(new FormData(form));
    body.set("scan_id", id);
    var ctl = new AbortController();
    var timer = setTimeout(function () { ctl.abort(); }, 4000);
    fetch(form.action, { method: "POST", body: body, signal: ctl.signal, credentials: "same-origin" })
      .then(function (r) {
        clearTimeout(timer);
        if (r.status >= 500) {
          throw new Error("server " + r.status);
        }
        return r.text();
      })
      .then(function (html) {
        // Only no answer is offline: a page that is not the scan page
        // (signed out) is shown as it is.
        if (!swap(html)) {
          form.submit();
          return;
        }
        setOnline(true);
        codeField.value = "";
        codeField.focus();
      }, function () {
        clearTimeout(timer);
        if (store.list) {
          offlineScan(code, gate, id);
        } else {
          unchecked();
        }
      });
  }

  // The camera reads QR codes with the browser's BarcodeDetector where it
  // has one for QR, else with jsQR (static/jsqr.js, fetched on first use).
  // A code is scanned when it comes into view, not again while it stays.
  var camera = null;
  var cameraStarting = false;

  function loadScript(src) {
    return new Promise(function (resolve, reject) {
      if (window.jsQR) {
        resolve();
        return;
      }
      var el = document.createElement("script");
      el.src = src;
      el.onload = resolve;
      el.onerror = reject;
      document.head.appendChild(el);
    });
  }

  function jsQRReader(src) {
    return loadScript(src).then(function () {
      var canvas = document.createElement("canvas");
      var ctx = canvas.getContext("2d", { willReadFrequently: true });
      return function (video) {
        var w = video.videoWidth, h = video.videoHeight;
        if (!w || !h) {
          return Promise.resolve("");
        }
        canvas.width = w;
        canvas.height = h;
        ctx.drawImage(video, 0, 0, w, h);
        var found = window.jsQR(ctx.getImageData(0, 0, w, h).data, w, h, { inversionAttempts: "dontInvert" });
        return Promise.resolve(found ? found.data : "");
      };
    });
  }

  function qrReader(src) {
    if (!("BarcodeDetector" in window)) {
      return jsQRReader(src);
    }
    return window.BarcodeDetector.getSupportedFormats().then(function (formats) {
      if (formats.indexOf("qr_code") < 0) {
        return jsQRReader(src);
      }
      var detector = new window.BarcodeDetector({ formats: ["qr_code"] });
      return function (video) {
        return detector.detect(video).then(function (found) { return found.length ? found[0].rawValue : ""; });
      };
    });
  }

  function readFrame(cam) {
    if (camera !== cam || !cam.read) {
      return; // stopped, or restarted: that one reads its own frames
    }
    cam.read(document.getElementById("door-video")).then(function (text) {
      var now = Date.now();
      if (text && (text !== cam.last || now - cam.seen > 1500)) {
        codeField.value = text;
        form.requestSubmit();
      }
      if (text) {
        cam.last = text;
        cam.seen = now;
      }
    }).catch(function () {}).then(function () {
      setTimeout(function () { readFrame(cam); }, 200);
    });
  }

  function stopCamera() {
    var button = document.getElementById("door-camera");
    var video = document.getElementById("door-video");
    camera.stream.getTracks().forEach(function (t) { t.stop(); });
    camera = null;
    video.srcObject = null;
    video.hidden = true;
    button.setAttribute("aria-pressed", "false");
    button.textContent = button.getAttribute("data-start");
  }

  function toggleCamera() {
    var button = document.getElementById("door-camera");
    var status = document.getElementById("door-camera-status");
    if (camera) {
      stopCamera();
      return;
    }
    if (cameraStarting) {
      return; // the browser is still asking for the camera
    }
    cameraStarting = true;
    navigator.mediaDevices.getUserMedia({ video: { facingMode: "environment" }, audio: false })
      .then(function (stream) {
        var video = document.getElementById("door-video");
        cameraStarting = false;
        camera = { stream: stream, last: "", seen: 0 };
        video.srcObject = stream;
        video.hidden = false;
        button.setAttribute("aria-pressed", "true");
        button.textContent = button.getAttribute("data-stop");
        status.textContent = "";
        return video.play().then(function () { return qrReader(button.getAttribute("data-jsqr")); });
      })
      .then(function (read) {
        if (camera) {
          camera.read = read;
          readFrame(camera);
        }
      })
      .catch(function () {
        cameraStarting = false;
        if (camera) {
          stopCamera();
        }
        status.textContent = texts["door.camera.failed"];
      });
  }

  var syncing = false;
  var syncRefused = false; // the server refused a batch: not again until a new list

  // sync sends the waiting scans of one gate, up to 500 at a time; those
  // the server answered leave the queue.
  function sync() {
    if (syncing || syncRefused || !store.queue.length) {
      return;
    }
    syncing = true;
    var gate = store.queue[0].gate;
    var batch = store.queue.filter(function (s) { return s.gate === gate; }).slice(0, 500);
    var body = { gate: gate, scans: batch.map(function (s) { return { id: s.id, code: s.code, at: s.at, seat_ids: s.seat_ids }; }) };
    fetch(root.getAttribute("data-sync"), {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf() },
      body: JSON.stringify(body)
    }).then(function (r) {
      if (r.status >= 400 && r.status < 500) {
        // Refused, not unreachable: sent again it would be refused again.
        // The scans stay, and the gate says so.
        syncing = false;
        syncRefused = true;
        storageError(fmt("door.offline.refused", [r.status]));
        return null;
      }
      if (!r.ok) {
        throw new Error("sync " + r.status);
      }
      return r.json();
    }).then(function (res) {
      if (!res) {
        return;
      }
      var done = {}, doubles = 0, invalid = 0;
      res.results.forEach(function (x) {
        done[x.id] = true;
        store.sent[x.id] = true;
        doubles += x.result === "double_entry" ? 1 : 0;
        invalid += x.result === "not_valid" ? 1 : 0;
      });
      store.queue = store.queue.filter(function (s) { return !done[s.id]; });
      save();
      syncing = false;
      var sent = document.getElementById("door-offline-sent") || document.createElement("p");
      sent.id = "door-offline-sent";
      sent.setAttribute("role", "status");
      sent.textContent = fmt("door.offline.sent", [res.results.length, doubles, invalid]);
      document.getElementById("door-offline-queue").after(sent);
      render();
      sync();
    }).catch(function () {
      syncing = false;
      setOnline(false);
    });
  }

  function csrf() {
    var m = document.querySelector('meta[name="csrf-token"]');
    return m ? m.content : "";
  }

  function ping() {
    fetch(root.getAttribute("data-ping"), { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { setOnline(r.ok); })
      .catch(function () { setOnline(false); });
  }

  function download(ev) {
    ev.preventDefault();
    var sel = document.getElementById("door-offline-show");
    if (!sel.value) {
      return;
    }
    fetch(root.getAttribute("data-list") + "?show=" + encodeURIComponent(sel.value), { credentials: "same-origin", cache: "no-store" })
      .then(function (r) {
        if (!r.ok) {
          throw new Error("list " + r.status);
        }
        return r.json();
      })
      .then(function (list) {
        store.list = list;
        store.showName = sel.options[sel.selectedIndex].text;
        // The new list knows every admission the server has; the scans
        // still waiting here it does not.
        store.local = {};
        reindex();
        store.queue.forEach(function (q) {
          var hit = store.index[hashOf(q.code)];
          if (hit) {
            var t = hit.t;
            var mine = store.local[t.hash] || { seats: [], at: q.at };
            store.local[t.hash] = { seats: mine.seats.concat(q.seat_ids), at: q.at };
          }
        });
        syncRefused = false;
        save();
        setOnline(true);
        render();
      })
      .catch(function () {
        document.getElementById("door-offline-status").textContent = texts["door.offline.failed"];
      });
  }

  function start() {
    soundOfAnswer();
    root = document.getElementById("door-offline");
    form = document.getElementById("door-form");
    if (!root || !form) {
      return;
    }
    codeField = document.getElementById("door-code");
    gateField = document.getElementById("door-gate");
    texts = JSON.parse(root.getAttribute("data-texts"));
    alphabet = root.getAttribute("data-alphabet");
    codeLen = Number(root.getAttribute("data-code-len"));
    seatCodeLen = Number(root.getAttribute("data-seat-code-len"));
    load();
    form.addEventListener("submit", scan);
    var cam = document.getElementById("door-camera");
    if (cam && navigator.mediaDevices && navigator.mediaDevices.getUserMedia) {
      cam.hidden = false;
      cam.addEventListener("click", toggleCamera);
    }
    document.getElementById("door-offline-form").addEventListener("submit", download);
    window.addEventListener("online", ping);
    window.addEventListener("offline", function () { setOnline(false); });
    setInterval(ping, 5000);
    render();
    sync();
  }

  document.addEventListener("DOMContentLoaded", start);
})();
