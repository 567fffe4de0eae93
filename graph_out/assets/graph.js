/* vault-kg graph viewer: canvas rendering of a precomputed layout, offline, no dependencies.
   Large graphs open with communities collapsed into discs (god nodes stay visible); a click on a
   disc expands it. window.kgView is a read-only status object for tests and the benchmark. */
(function () {
  "use strict";
  const T0 = performance.now();
  const D = JSON.parse(document.getElementById("kg-data").textContent);
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  };

  // ---- data -------------------------------------------------------------------------------
  const ND = D.nodes, ED = D.edges;
  const N = ND.id.length, E = ED.s.length;
  const X = Float32Array.from(ND.x), Y = Float32Array.from(ND.y);
  const RANK = Float32Array.from(ND.rank);
  const R = Float32Array.from(ND.size);
  const KIND = ND.kind, STATUS = ND.status, COMM = ND.community;
  const commIndex = new Map();
  D.communities.forEach((c, k) => commIndex.set(c.id, k));
  const indexOf = new Map();
  for (let i = 0; i < N; i++) indexOf.set(ND.id[i], i);
  const UNRESOLVED_KIND = D.kinds.indexOf("unresolved");
  const god = new Uint8Array(N);
  D.god_nodes.forEach((i) => { god[i] = 1; });

  // No orange in the palette: orange (#ff9f43) is reserved for the stale mark.
  const PALETTE = ["#4e9be6", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#8f9cff",
    "#ff9da7", "#9ecae9", "#8cd17d", "#d4a6c8", "#86bcb6", "#c9b3ff", "#a0cbe8", "#d37295",
    "#b6c94d", "#499894", "#e8e07a", "#6fd0e8", "#c08fd8"];
  function commColor(c) {
    if (c < 0) return "#7d8590";
    if (c < PALETTE.length) return PALETTE[c];
    let h = (c * 137.508) % 360;
    if (h > 10 && h < 50) h += 45;
    return "hsl(" + h.toFixed(1) + ",55%,62%)";
  }
  const COLOR = new Array(N);
  for (let i = 0; i < N; i++) COLOR[i] = commColor(COMM[i]);

  // adjacency (CSR) for the panel: out and in edges per node
  function csr(from) {
    const start = new Int32Array(N + 1);
    for (let e = 0; e < E; e++) start[from[e] + 1]++;
    for (let i = 0; i < N; i++) start[i + 1] += start[i];
    const fill = start.slice(0, N), list = new Int32Array(E);
    for (let e = 0; e < E; e++) list[fill[from[e]]++] = e;
    return { start, list };
  }
  const OUT = csr(ED.s), IN = csr(ED.t);

  function scopesOf(i) {
    const out = [];
    if (ND.scope && ND.scope[i]) out.push(ND.scope[i]);
    for (const t of ND.tags[i]) if (t.startsWith("scope/")) out.push(t.slice(6));
    return out;
  }
  function namespacesOf(i) {
    const out = [];
    for (const t of ND.tags[i]) { const k = t.indexOf("/"); if (k > 0) out.push(t.slice(0, k)); }
    if (D.kinds[KIND[i]] === "tag") {
      const name = ND.id[i].slice(4), k = name.indexOf("/");
      out.push(k > 0 ? name.slice(0, k) : name);
    }
    return out;
  }
  const NS = new Array(N), SC = new Array(N);
  const nsCount = new Map(), scCount = new Map();
  for (let i = 0; i < N; i++) {
    NS[i] = namespacesOf(i); SC[i] = scopesOf(i);
    for (const v of new Set(NS[i])) nsCount.set(v, (nsCount.get(v) || 0) + 1);
    for (const v of new Set(SC[i])) scCount.set(v, (scCount.get(v) || 0) + 1);
  }

  // ---- state ------------------------------------------------------------------------------
  const LOD = N > D.lod_threshold;
  const kindOn = D.kinds.map(() => true);
  const relOn = D.relations.map(() => true);
  const confOn = D.confidences.map(() => true);
  const nsOn = new Set();
  let scopeOn = "";
  const expanded = new Set();
  const visible = new Uint8Array(N);
  const shown = new Uint8Array(N);
  let drawNodes = new Int32Array(0), byColor = [], plainEdges = new Float32Array(0);
  let bundles = [], bundleWidths = [], bubbles = [], grid = new Map();
  let selected = -1, selectedComm = null, hovered = -1;
  const cam = { x: 0, y: 0, k: 1 };
  let width = 0, height = 0, dpr = 1, dirty = true, firstRenderMs = -1, interactiveMs = -1;
  let frames = 0, lastFrameMs = 0;

  function nodePasses(i) {
    if (!kindOn[KIND[i]]) return false;
    if (scopeOn && !SC[i].includes(scopeOn)) return false;
    if (nsOn.size) {
      let ok = false;
      for (const v of NS[i]) if (nsOn.has(v)) { ok = true; break; }
      if (!ok) return false;
    }
    return true;
  }

  // Recomputed on any filter / expansion change: which nodes are drawn, which edges, which discs.
  function rebuild() {
    const commVisible = new Map();
    let count = 0;
    for (let i = 0; i < N; i++) {
      visible[i] = nodePasses(i) ? 1 : 0;
      shown[i] = visible[i] && (!LOD || god[i] || i === selected || expanded.has(COMM[i])) ? 1 : 0;
      if (visible[i] && !shown[i]) commVisible.set(COMM[i], (commVisible.get(COMM[i]) || 0) + 1);
      if (shown[i]) count++;
    }
    const list = new Int32Array(count);
    let k = 0;
    for (let i = 0; i < N; i++) if (shown[i]) list[k++] = i;
    list.sort((a, b) => RANK[a] - RANK[b] || a - b);
    drawNodes = list;
    const groups = new Map();
    for (const i of list) {
      let g = groups.get(COLOR[i]);
      if (!g) { g = []; groups.set(COLOR[i], g); }
      g.push(i);
    }
    byColor = Array.from(groups.entries());
    bubbles = [];
    for (const c of D.communities) {
      const n = commVisible.get(c.id) || 0;
      if (n > 0) bubbles.push({ c, n });
    }
    const bubbleOf = new Map(bubbles.map((b) => [b.c.id, b]));
    const segs = [], agg = new Map();
    for (let e = 0; e < E; e++) {
      if (!relOn[ED.rel[e]] || !confOn[ED.conf[e]]) continue;
      const s = ED.s[e], t = ED.t[e];
      if (!visible[s] || !visible[t]) continue;
      if (shown[s] && shown[t]) { segs.push(X[s], Y[s], X[t], Y[t]); continue; }
      const a = shown[s] ? "n" + s : (bubbleOf.has(COMM[s]) ? "c" + COMM[s] : null);
      const b = shown[t] ? "n" + t : (bubbleOf.has(COMM[t]) ? "c" + COMM[t] : null);
      if (!a || !b || a === b) continue;
      const key = a < b ? a + "|" + b : b + "|" + a;
      agg.set(key, (agg.get(key) || 0) + 1);
    }
    plainEdges = Float32Array.from(segs);
    const pt = (ref) => {
      if (ref[0] === "n") { const i = +ref.slice(1); return [X[i], Y[i]]; }
      const c = D.communities[commIndex.get(+ref.slice(1))];
      return [c.x, c.y];
    };
    bundles = [];
    const widths = new Map();
    for (const [key, n] of agg) {
      const [a, b] = key.split("|");
      const p = pt(a), q = pt(b);
      const seg = [p[0], p[1], q[0], q[1], n];
      bundles.push(seg);
      const w = Math.round((0.6 + 0.6 * Math.log2(n)) * 2) / 2;
      if (!widths.has(w)) widths.set(w, []);
      widths.get(w).push(seg);
    }
    bundleWidths = Array.from(widths.entries()).sort((x, y) => x[0] - y[0]);
    grid = new Map();
    for (const i of list) {
      const key = Math.floor(X[i] / 40) + ":" + Math.floor(Y[i] / 40);
      let cell = grid.get(key);
      if (!cell) { cell = []; grid.set(key, cell); }
      cell.push(i);
    }
    updateStats();
    dirty = true;
  }

  // ---- drawing ----------------------------------------------------------------------------
  const canvas = $("view"), ctx = canvas.getContext("2d");

  function markOf(i) {
    if (KIND[i] === UNRESOLVED_KIND) return "unresolved-hollow";
    const st = D.statuses[STATUS[i]];
    if (st === "stale") return "stale-dashed";
    if (st === "superseded") return "superseded-faded";
    if (st === "quarantined") return "quarantined-ring";
    return "none";
  }

  function resize() {
    const box = canvas.getBoundingClientRect();
    dpr = window.devicePixelRatio || 1;
    width = box.width; height = box.height;
    canvas.width = Math.max(1, Math.round(width * dpr));
    canvas.height = Math.max(1, Math.round(height * dpr));
    dirty = true;
  }
  const toScreen = (x, y) => [(x - cam.x) * cam.k + width / 2, (y - cam.y) * cam.k + height / 2];
  const toWorld = (sx, sy) => [(sx - width / 2) / cam.k + cam.x, (sy - height / 2) / cam.k + cam.y];

  function fit(animate) {
    let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
    for (let i = 0; i < N; i++) {
      if (!visible[i]) continue;
      minX = Math.min(minX, X[i]); maxX = Math.max(maxX, X[i]);
      minY = Math.min(minY, Y[i]); maxY = Math.max(maxY, Y[i]);
    }
    if (!isFinite(minX)) { minX = minY = -100; maxX = maxY = 100; }
    const k = Math.min(width / (maxX - minX + 80), height / (maxY - minY + 80), 4);
    flyTo((minX + maxX) / 2, (minY + maxY) / 2, k, animate);
  }

  let anim = null;
  function flyTo(x, y, k, animate) {
    if (!animate) { cam.x = x; cam.y = y; cam.k = k; anim = null; dirty = true; return; }
    anim = { from: { x: cam.x, y: cam.y, k: cam.k }, to: { x, y, k }, t0: performance.now() };
    dirty = true;
  }

  function drawCircles(list, radiusMin) {
    for (const i of list) {
      const r = Math.max(R[i], radiusMin);
      ctx.moveTo(X[i] + r, Y[i]);
      ctx.arc(X[i], Y[i], r, 0, 6.283185307);
    }
  }

  function frame(now) {
    if (anim) {
      const t = Math.min(1, (now - anim.t0) / 350), e = t < 0.5 ? 2 * t * t : 1 - Math.pow(-2 * t + 2, 2) / 2;
      cam.x = anim.from.x + (anim.to.x - anim.from.x) * e;
      cam.y = anim.from.y + (anim.to.y - anim.from.y) * e;
      cam.k = anim.from.k * Math.pow(anim.to.k / anim.from.k, e);
      if (t >= 1) anim = null;
      dirty = true;
    }
    if (dirty) { draw(); dirty = false; }
    requestAnimationFrame(frame);
  }

  function draw() {
    const t = performance.now();
    const k = cam.k, px = 1 / k;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.fillStyle = "#0f1217";
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.setTransform(dpr * k, 0, 0, dpr * k, dpr * (width / 2 - cam.x * k), dpr * (height / 2 - cam.y * k));
    const [vx0, vy0] = toWorld(-40, -40), [vx1, vy1] = toWorld(width + 40, height + 40);
    const inView = (x, y, r) => x + r > vx0 && x - r < vx1 && y + r > vy0 && y - r < vy1;

    // community discs (collapsed)
    for (const b of bubbles) {
      const c = b.c;
      if (!inView(c.x, c.y, c.r)) continue;
      const col = commColor(c.id);
      ctx.beginPath();
      ctx.arc(c.x, c.y, c.r, 0, 6.283185307);
      ctx.globalAlpha = selectedComm === c.id ? 0.32 : 0.16;
      ctx.fillStyle = col; ctx.fill();
      ctx.globalAlpha = 0.75; ctx.lineWidth = 1.5 * px; ctx.strokeStyle = col; ctx.stroke();
      ctx.globalAlpha = 1;
    }
    // edges
    const S = plainEdges;
    ctx.lineWidth = Math.min(1, 0.9 * px * Math.max(1, k));
    ctx.strokeStyle = "rgba(160,172,190," + (S.length > 40000 ? 0.08 : S.length > 4000 ? 0.13 : 0.22) + ")";
    ctx.beginPath();
    for (let j = 0; j < S.length; j += 4) { ctx.moveTo(S[j], S[j + 1]); ctx.lineTo(S[j + 2], S[j + 3]); }
    ctx.stroke();
    ctx.strokeStyle = "rgba(160,172,190," + (bundles.length > 500 ? 0.07 : 0.16) + ")";
    for (const [w, list] of bundleWidths) {  // one stroke per width class
      ctx.lineWidth = w * px;
      ctx.beginPath();
      for (const b of list) { ctx.moveTo(b[0], b[1]); ctx.lineTo(b[2], b[3]); }
      ctx.stroke();
    }
    // edges of the selected node, highlighted
    if (selected >= 0 && shown[selected]) {
      ctx.strokeStyle = "rgba(108,182,255,0.85)"; ctx.lineWidth = 1.6 * px;
      ctx.beginPath();
      eachEdge(selected, (e, other) => {
        if (shown[other] && relOn[ED.rel[e]] && confOn[ED.conf[e]]) {
          ctx.moveTo(X[selected], Y[selected]); ctx.lineTo(X[other], Y[other]);
        }
      });
      ctx.stroke();
    }
    // nodes, one path per colour
    const rmin = 1.4 * px;
    for (const [col, list] of byColor) {
      ctx.beginPath();
      drawCircles(list, rmin);
      ctx.fillStyle = col; ctx.fill();
    }
    // status marks
    ctx.lineWidth = 1.8 * px;
    for (const i of drawNodes) {
      const m = markOf(i);
      if (m === "none" || !inView(X[i], Y[i], R[i] + 4)) continue;
      const r = Math.max(R[i], rmin) + 2.2 * px;
      ctx.beginPath(); ctx.arc(X[i], Y[i], r, 0, 6.283185307);
      if (m === "stale-dashed") { ctx.setLineDash([4 * px, 3 * px]); ctx.strokeStyle = "#ff9f43"; }
      else if (m === "unresolved-hollow") {
        ctx.setLineDash([2 * px, 2 * px]); ctx.strokeStyle = "#8b95a5";
        ctx.fillStyle = "#0f1217";
        ctx.beginPath(); ctx.arc(X[i], Y[i], Math.max(R[i], rmin), 0, 6.283185307); ctx.fill();
      }
      else if (m === "superseded-faded") { ctx.setLineDash([3 * px, 3 * px]); ctx.strokeStyle = "#aab"; }
      else { ctx.setLineDash([]); ctx.strokeStyle = "#ff6b6b"; }
      ctx.stroke();
    }
    ctx.setLineDash([]);
    // selection ring
    if (selected >= 0 && shown[selected]) {
      ctx.beginPath(); ctx.arc(X[selected], Y[selected], R[selected] + 5 * px, 0, 6.283185307);
      ctx.strokeStyle = "#ffffff"; ctx.lineWidth = 2.2 * px; ctx.stroke();
    }
    drawLabels();
    lastFrameMs = performance.now() - t;
    frames++;
    if (firstRenderMs < 0) firstRenderMs = performance.now();
  }

  function drawLabels() {
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.textBaseline = "middle";
    ctx.lineJoin = "round";
    const taken = new Set();
    const claim = (sx, sy, w) => {
      const r0 = Math.floor((sy - 8) / 10), r1 = Math.floor((sy + 8) / 10);
      const c0 = Math.floor((sx - w / 2 - 4) / 20), c1 = Math.floor((sx + w / 2 + 4) / 20);
      for (let r = r0; r <= r1; r++) for (let c = c0; c <= c1; c++) if (taken.has(r * 100003 + c)) return false;
      for (let r = r0; r <= r1; r++) for (let c = c0; c <= c1; c++) taken.add(r * 100003 + c);
      return true;
    };
    const label = (text, sx, sy, font, color) => {
      ctx.font = font;
      const w = ctx.measureText(text).width;
      if (!claim(sx, sy, w)) return false;
      ctx.strokeStyle = "rgba(15,18,23,0.9)"; ctx.lineWidth = 3.5; ctx.textAlign = "center";
      ctx.strokeText(text, sx, sy); ctx.fillStyle = color; ctx.fillText(text, sx, sy);
      return true;
    };
    const short = (s) => (s.length > 38 ? s.slice(0, 36) + "…" : s);
    if (selected >= 0 && shown[selected]) {
      const [sx, sy] = toScreen(X[selected], Y[selected]);
      label(short(ND.label[selected]), sx, sy - R[selected] * cam.k - 14, "600 13px system-ui, sans-serif", "#ffffff");
    }
    if (hovered >= 0 && shown[hovered]) {
      const [sx, sy] = toScreen(X[hovered], Y[hovered]);
      label(short(ND.label[hovered]), sx, sy - R[hovered] * cam.k - 12, "12px system-ui, sans-serif", "#ffffff");
    }
    for (const b of bubbles) {
      const [sx, sy] = toScreen(b.c.x, b.c.y);
      if (sx < -200 || sx > width + 200 || sy < -50 || sy > height + 50) continue;
      const sr = b.c.r * cam.k;
      if (sr < 14) continue;
      const name = b.c.name || "community " + b.c.id;
      const text = sr > 90 ? short(name) : short(name.split(" / ")[0]);
      if (label(text, sx, sy, "600 12px system-ui, sans-serif", "#e8edf3") && sr > 30)
        label(b.n + " nodes", sx, sy + 15, "11px system-ui, sans-serif", "#8b95a5");
    }
    let drawn = 0;
    for (let j = drawNodes.length - 1; j >= 0 && drawn < 160; j--) {
      const i = drawNodes[j];
      const sr = R[i] * cam.k;
      if (sr < 5 && !god[i] && j < drawNodes.length - 40) break;
      if (i === selected || i === hovered) continue;
      const [sx, sy] = toScreen(X[i], Y[i]);
      if (sx < -100 || sx > width + 100 || sy < -20 || sy > height + 20) continue;
      label(short(ND.label[i]), sx, sy + Math.max(sr, 2) + 9, "12px system-ui, sans-serif", "#c9d1dc");
      drawn++;
    }
  }

  function eachEdge(i, fn) {
    for (let j = OUT.start[i]; j < OUT.start[i + 1]; j++) { const e = OUT.list[j]; fn(e, ED.t[e], "out"); }
    for (let j = IN.start[i]; j < IN.start[i + 1]; j++) { const e = IN.list[j]; fn(e, ED.s[e], "in"); }
  }

  // ---- hit testing & interaction ------------------------------------------------------------
  function nodeAt(sx, sy) {
    const [wx, wy] = toWorld(sx, sy);
    const gx = Math.floor(wx / 40), gy = Math.floor(wy / 40);
    const reach = Math.ceil((14 + 6 / cam.k) / 40);
    let best = -1, bestD = Infinity;
    for (let a = gx - reach; a <= gx + reach; a++) for (let b = gy - reach; b <= gy + reach; b++) {
      const cell = grid.get(a + ":" + b);
      if (!cell) continue;
      for (const i of cell) {
        const d = Math.hypot(X[i] - wx, Y[i] - wy);
        const r = Math.max(R[i], 1.4 / cam.k) + 4 / cam.k;
        if (d <= r && d < bestD) { best = i; bestD = d; }
      }
    }
    return best;
  }
  function bubbleAt(sx, sy) {
    const [wx, wy] = toWorld(sx, sy);
    for (const b of bubbles) if (Math.hypot(b.c.x - wx, b.c.y - wy) <= b.c.r) return b.c;
    return null;
  }

  let drag = null;
  canvas.addEventListener("pointerdown", (ev) => {
    drag = { x: ev.clientX, y: ev.clientY, cx: cam.x, cy: cam.y, moved: false };
    canvas.setPointerCapture(ev.pointerId);
  });
  canvas.addEventListener("pointermove", (ev) => {
    const box = canvas.getBoundingClientRect();
    const sx = ev.clientX - box.left, sy = ev.clientY - box.top;
    if (drag) {
      const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) { drag.moved = true; canvas.classList.add("dragging"); }
      if (drag.moved) { cam.x = drag.cx - dx / cam.k; cam.y = drag.cy - dy / cam.k; anim = null; dirty = true; }
      return;
    }
    const h = nodeAt(sx, sy);
    const tip = $("tip");
    if (h !== hovered) { hovered = h; dirty = true; }
    if (h >= 0) {
      tip.textContent = ND.label[h] + "  ·  " + D.kinds[KIND[h]];
      tip.style.display = "block"; tip.style.left = sx + 14 + "px"; tip.style.top = sy + 10 + "px";
    } else {
      const c = LOD ? bubbleAt(sx, sy) : null;
      if (c) {
        tip.textContent = (c.name || "community " + c.id) + " · " + c.size + " nodes · click to expand";
        tip.style.display = "block"; tip.style.left = sx + 14 + "px"; tip.style.top = sy + 10 + "px";
      } else tip.style.display = "none";
    }
  });
  canvas.addEventListener("pointerup", (ev) => {
    const wasDrag = drag && drag.moved;
    drag = null; canvas.classList.remove("dragging");
    if (wasDrag) return;
    const box = canvas.getBoundingClientRect();
    const sx = ev.clientX - box.left, sy = ev.clientY - box.top;
    const i = nodeAt(sx, sy);
    if (i >= 0) { select(i); return; }
    const c = LOD ? bubbleAt(sx, sy) : null;
    if (c) { expandCommunity(c.id, true); return; }
    select(-1);
  });
  canvas.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const box = canvas.getBoundingClientRect();
    const sx = ev.clientX - box.left, sy = ev.clientY - box.top;
    const [wx, wy] = toWorld(sx, sy);
    const f = Math.exp(-ev.deltaY * (ev.deltaMode ? 0.05 : 0.0015));
    cam.k = Math.min(40, Math.max(0.005, cam.k * f));
    cam.x = wx - (sx - width / 2) / cam.k; cam.y = wy - (sy - height / 2) / cam.k;
    anim = null; dirty = true;
  }, { passive: false });
  window.addEventListener("resize", () => { resize(); });

  function expandCommunity(id, zoom) {
    expanded.add(id);
    rebuild(); renderCommunities();
    const c = D.communities[commIndex.get(id)];
    if (c) {
      showCommunity(c);
      if (zoom) flyTo(c.x, c.y, Math.min(width, height) / (2.3 * c.r), true);
    }
  }
  function collapseAll() { expanded.clear(); rebuild(); renderCommunities(); }
  function expandAll() { for (const c of D.communities) expanded.add(c.id); rebuild(); renderCommunities(); }

  // ---- selection & panel ------------------------------------------------------------------
  function select(i) {
    selected = i; selectedComm = null;
    if (i < 0) { $("panel").hidden = true; dirty = true; resizeSoon(); return; }
    if (LOD && !shown[i]) rebuild();
    showNode(i);
    dirty = true;
  }

  function focusNode(i) {
    if (!visible[i]) {
      kindOn.fill(true); relOn.fill(true); confOn.fill(true); nsOn.clear(); scopeOn = "";
      renderFilters();
      toast("Filters cleared to show " + ND.label[i]);
    }
    if (LOD) expanded.add(COMM[i]);
    selected = i;
    rebuild(); renderCommunities();
    showNode(i);
    flyTo(X[i], Y[i], Math.max(cam.k, 1.6), true);
  }

  let resizeTimer = 0;
  function resizeSoon() { clearTimeout(resizeTimer); resizeTimer = setTimeout(resize, 0); }

  function badge(text, cls) { return el("span", "badge " + cls, text); }

  function showNode(i) {
    const p = $("panel");
    const wasHidden = p.hidden;
    p.replaceChildren();
    const close = el("button", "close", "×");
    close.title = "Close (Esc)"; close.onclick = () => select(-1);
    p.append(close, el("h2", null, ND.label[i]));
    const badges = el("div", "badges");
    const kind = D.kinds[KIND[i]], st = D.statuses[STATUS[i]];
    badges.append(badge(kind, "kind"));
    if (kind === "unresolved") badges.append(badge("UNRESOLVED", "unresolved"));
    if (st === "stale") badges.append(badge("STALE", "stale"));
    else if (st && st !== "live") badges.append(badge(st.toUpperCase(), st));
    else if (kind !== "unresolved") badges.append(badge("live", "live"));
    if (god[i]) badges.append(badge("god node", "kind"));
    p.append(badges);
    if (ND.summary[i]) p.append(el("div", "summary", ND.summary[i]));
    if (ND.note[i]) p.append(el("div", "why " + (st || ""), ND.note[i]));
    const dl = el("dl");
    const row = (k, v, mono) => { if (v === "" || v === null || v === undefined) return; dl.append(el("dt", null, k), el("dd", mono ? "mono" : null, v)); };
    row("id", ND.id[i], true);
    let src = ND.source[i];
    if (src && ND.line[i]) src += ":" + ND.line[i] + (ND.end_line[i] ? "–" + ND.end_line[i] : "");
    row("source", src, true);
    const ci = commIndex.get(COMM[i]);
    row("community", ci === undefined ? "" : D.communities[ci].name || String(COMM[i]));
    row("rank", RANK[i].toFixed(3));
    if (ND.anchor[i]) row("anchor", ND.anchor[i], true);
    if (ND.aliases[i].length) row("aliases", ND.aliases[i].join(", "));
    p.append(dl);
    if (ND.tags[i].length) {
      p.append(el("h3", null, "Tags"));
      const chips = el("div", "chips");
      for (const t of ND.tags[i]) {
        const c = el("span", "chip", "#" + t);
        const ti = indexOf.get("tag:" + t);
        if (ti !== undefined) c.onclick = () => focusNode(ti);
        chips.append(c);
      }
      p.append(chips);
    }
    const groups = new Map();
    eachEdge(i, (e, other, dir) => {
      const key = (dir === "out" ? "→ " : "← ") + D.relations[ED.rel[e]];
      let g = groups.get(key);
      if (!g) { g = []; groups.set(key, g); }
      g.push([other, e]);
    });
    p.append(el("h3", null, "Neighbours (" + (OUT.start[i + 1] - OUT.start[i] + IN.start[i + 1] - IN.start[i]) + ")"));
    for (const key of Array.from(groups.keys()).sort()) {
      const items = groups.get(key).sort((a, b) => RANK[b[0]] - RANK[a[0]] || a[0] - b[0]);
      const h = el("div", "rel");
      h.append(el("span", "dir", key.slice(0, 2)), document.createTextNode(key.slice(2) + " "), el("span", "n conf", "(" + items.length + ")"));
      p.append(h);
      const ul = el("ul", "list");
      const add = (from, to) => {
        for (const [o, e] of items.slice(from, to)) {
          const li = el("li");
          const sw = el("span", "swatch"); sw.style.background = COLOR[o];
          li.append(sw, el("span", "lbl", ND.label[o]));
          const conf = D.confidences[ED.conf[e]];
          if (conf !== "EXTRACTED") li.append(el("span", "conf " + conf, conf.toLowerCase()));
          if (STATUS[o] !== STATUS_LIVE) li.append(el("span", "conf", D.statuses[STATUS[o]]));
          li.title = ND.id[o];
          li.onclick = () => focusNode(o);
          ul.append(li);
        }
      };
      add(0, 25);
      p.append(ul);
      if (items.length > 25) {
        const more = el("div", "more", "+ " + (items.length - 25) + " more");
        more.onclick = () => { add(25, items.length); more.remove(); };
        p.append(more);
      }
    }
    p.hidden = false;
    if (wasHidden) resizeSoon();
  }
  const STATUS_LIVE = D.statuses.indexOf("live");

  function showCommunity(c) {
    selected = -1; selectedComm = c.id;
    const p = $("panel");
    const wasHidden = p.hidden;
    p.replaceChildren();
    const close = el("button", "close", "×"); close.onclick = () => select(-1);
    p.append(close, el("h2", null, c.name || "community " + c.id));
    const badges = el("div", "badges");
    badges.append(badge("community " + c.id, "kind"));
    p.append(badges);
    const dl = el("dl");
    dl.append(el("dt", null, "size"), el("dd", null, c.size), el("dt", null, "cohesion"), el("dd", null, (+c.cohesion).toFixed(3)));
    p.append(dl);
    p.append(el("h3", null, "Central members"));
    const ul = el("ul", "list");
    for (const i of c.top) {
      const li = el("li");
      const sw = el("span", "swatch"); sw.style.background = COLOR[i];
      li.append(sw, el("span", "lbl", ND.label[i]), el("span", "n", D.kinds[KIND[i]]));
      li.onclick = () => focusNode(i);
      ul.append(li);
    }
    p.append(ul);
    p.hidden = false;
    if (wasHidden) resizeSoon();
    dirty = true;
  }

  // ---- search -----------------------------------------------------------------------------
  const LOWER = ND.label.map((s) => s.toLowerCase());
  const ALIAS = ND.aliases.map((a) => a.join(" ").toLowerCase());
  const IDLOW = ND.id.map((s) => s.toLowerCase());
  let results = [], active = 0;
  function search(q) {
    q = q.trim().toLowerCase();
    if (!q) return [];
    const hits = [];
    for (let i = 0; i < N; i++) {
      const l = LOWER[i];
      let s = -1;
      if (l === q) s = 0;
      else if (l.startsWith(q)) s = 1;
      else if (l.includes(" " + q)) s = 2;
      else if (l.includes(q)) s = 3;
      else if (ALIAS[i].includes(q)) s = 4;
      else if (IDLOW[i].includes(q)) s = 5;
      if (s >= 0) hits.push([s, -RANK[i], i]);
    }
    hits.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
    return hits.slice(0, 30).map((h) => h[2]);
  }
  function renderResults() {
    const ul = $("results");
    ul.replaceChildren();
    results.forEach((i, j) => {
      const li = el("li", j === active ? "active" : "");
      const sw = el("span", "swatch"); sw.style.background = COLOR[i];
      li.append(sw, el("span", "lbl", ND.label[i]), el("span", "kind", D.kinds[KIND[i]]));
      li.onmousedown = (ev) => { ev.preventDefault(); active = j; focusNode(i); renderResults(); };
      ul.append(li);
    });
    const a = ul.children[active];
    if (a) a.scrollIntoView({ block: "nearest" });
  }
  const box = $("search");
  box.addEventListener("input", () => { results = search(box.value); active = 0; renderResults(); });
  box.addEventListener("keydown", (ev) => {
    if (ev.key === "ArrowDown") { ev.preventDefault(); if (results.length) { active = (active + 1) % results.length; renderResults(); } }
    else if (ev.key === "ArrowUp") { ev.preventDefault(); if (results.length) { active = (active - 1 + results.length) % results.length; renderResults(); } }
    else if (ev.key === "Enter") { ev.preventDefault(); if (results.length) focusNode(results[active]); }
    else if (ev.key === "Escape") { box.value = ""; results = []; renderResults(); box.blur(); }
  });
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "/" && document.activeElement !== box) { ev.preventDefault(); box.focus(); box.select(); }
    else if (ev.key === "Escape" && document.activeElement !== box) select(-1);
  });

  // ---- side panel: filters, god nodes, communities --------------------------------------------
  function countBy(arr, size) {
    const c = new Array(size).fill(0);
    for (let i = 0; i < arr.length; i++) c[arr[i]]++;
    return c;
  }
  const kindCount = countBy(KIND, D.kinds.length);
  const relCount = countBy(ED.rel, D.relations.length);
  const confCount = countBy(ED.conf, D.confidences.length);

  function checkList(host, names, counts, state) {
    host.replaceChildren();
    names.forEach((name, j) => {
      const lab = el("label");
      const cb = el("input"); cb.type = "checkbox"; cb.checked = state[j]; cb.dataset.value = name;
      cb.onchange = () => { state[j] = cb.checked; rebuild(); };
      lab.append(cb, document.createTextNode(name), el("span", "n", counts[j]));
      host.append(lab);
    });
  }
  function renderFilters() {
    checkList($("f-kind"), D.kinds, kindCount, kindOn);
    checkList($("f-rel"), D.relations, relCount, relOn);
    checkList($("f-conf"), D.confidences, confCount, confOn);
    const ns = $("f-ns");
    ns.replaceChildren();
    for (const [name, n] of Array.from(nsCount.entries()).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))) {
      const chip = el("span", "chip" + (nsOn.has(name) ? " on" : ""), name + "/ " + n);
      chip.dataset.value = name;
      chip.onclick = () => { if (nsOn.has(name)) nsOn.delete(name); else nsOn.add(name); chip.classList.toggle("on"); rebuild(); };
      ns.append(chip);
    }
    if (!nsCount.size) ns.append(el("span", "conf", "no namespaced tags"));
    const sel = $("f-scope");
    sel.replaceChildren();
    const all = el("option", null, "all scopes (" + D.meta.scope + ")"); all.value = ""; sel.append(all);
    for (const [name, n] of Array.from(scCount.entries()).sort()) {
      const o = el("option", null, name + " (" + n + ")"); o.value = name; sel.append(o);
    }
    sel.value = scopeOn;
    sel.onchange = () => { scopeOn = sel.value; rebuild(); };
  }
  function renderGods() {
    const ul = $("gods");
    ul.replaceChildren();
    for (const i of D.god_nodes) {
      const li = el("li");
      const sw = el("span", "swatch"); sw.style.background = COLOR[i];
      li.append(sw, el("span", "lbl", ND.label[i]), el("span", "n", RANK[i].toFixed(2)));
      li.title = ND.id[i];
      li.onclick = () => focusNode(i);
      ul.append(li);
    }
    if (!D.god_nodes.length) ul.append(el("li", "conf", "none"));
  }
  function renderCommunities() {
    const ul = $("comms");
    ul.replaceChildren();
    for (const c of D.communities.slice(0, 60)) {
      const li = el("li");
      const sw = el("span", "swatch"); sw.style.background = commColor(c.id);
      li.append(sw, el("span", "lbl", c.name || "community " + c.id), el("span", "n", c.size + (LOD ? (expanded.has(c.id) ? " ▾" : " ▸") : "")));
      li.onclick = () => {
        if (LOD && !expanded.has(c.id)) expandCommunity(c.id, true);
        else { showCommunity(c); flyTo(c.x, c.y, Math.min(width, height) / (2.3 * c.r), true); }
      };
      ul.append(li);
    }
  }
  function updateStats() {
    const shownCount = drawNodes.length;
    $("stats").textContent = N.toLocaleString("en") + " nodes · " + E.toLocaleString("en") + " edges · " +
      D.communities.length + " communities";
    $("lodnote").textContent = LOD ? shownCount.toLocaleString("en") + " of " + N.toLocaleString("en") +
      " nodes shown · click a community to expand" : "";
  }
  // graph-state.js (beside the page, rewritten with every graph.json) names the current graph:
  // a page drawn from an earlier one says so, and how to redraw it.
  function behindNote() {
    const state = window.kgGraphState;
    if (!state || D.meta.digest === null || D.meta.digest === undefined || state.digest === D.meta.digest) return "";
    const command = D.meta.kind === "code" ? "kg html --scope " + D.meta.scope : "kg html";
    return "The graph changed since this page was drawn (now " + Number(state.nodes).toLocaleString("en") +
      " nodes, " + Number(state.edges).toLocaleString("en") + " edges). Run `" + command + "` to redraw it.";
  }
  const BEHIND = behindNote();
  if (BEHIND) { $("behind").textContent = BEHIND; $("behind").hidden = false; }
  let toastTimer = 0;
  function toast(text) {
    const t = $("toast"); t.textContent = text; t.style.display = "block";
    clearTimeout(toastTimer); toastTimer = setTimeout(() => { t.style.display = "none"; }, 2500);
  }

  $("btn-fit").onclick = () => fit(true);
  $("btn-expand").onclick = () => expandAll();
  $("btn-collapse").onclick = () => collapseAll();
  $("btn-expand").hidden = $("btn-collapse").hidden = !LOD;

  // ---- start ------------------------------------------------------------------------------
  resize();
  renderFilters(); renderGods(); renderCommunities();
  rebuild();
  fit(false);
  draw(); dirty = false;
  requestAnimationFrame(frame);
  interactiveMs = performance.now();

  const api = {
    screenPos(id) {
      const i = indexOf.get(id);
      if (i === undefined || !shown[i]) return null;
      const [sx, sy] = toScreen(X[i], Y[i]);
      const b = canvas.getBoundingClientRect();
      return { x: b.left + sx, y: b.top + sy };
    },
    communityScreenPos(id) {
      const k = commIndex.get(id);
      if (k === undefined) return null;
      const c = D.communities[k];
      const [sx, sy] = toScreen(c.x, c.y);
      const b = canvas.getBoundingClientRect();
      return { x: b.left + sx, y: b.top + sy, r: c.r * cam.k };
    },
    nodeAt(x, y) {
      const b = canvas.getBoundingClientRect();
      const i = nodeAt(x - b.left, y - b.top);
      return i >= 0 ? ND.id[i] : null;
    },
    markOf(id) { const i = indexOf.get(id); return i === undefined ? null : markOf(i); },
    isShown(id) { const i = indexOf.get(id); return i !== undefined && shown[i] === 1; },
  };
  const props = {
    ready: () => firstRenderMs >= 0 && interactiveMs >= 0,
    behind: () => BEHIND,
    nodes: () => N, edges: () => E, lod: () => LOD,
    shownNodes: () => drawNodes.length,
    drawnEdges: () => plainEdges.length / 4 + bundles.length,
    collapsedCommunities: () => bubbles.length,
    expandedCommunities: () => expanded.size,
    selected: () => (selected >= 0 ? ND.id[selected] : null),
    selectedCommunity: () => selectedComm,
    searchResults: () => results.map((i) => ND.id[i]),
    activeResult: () => (results.length ? ND.id[results[active]] : null),
    camera: () => ({ x: cam.x, y: cam.y, k: cam.k }), flying: () => anim !== null,
    frames: () => frames, lastFrameMs: () => lastFrameMs,
    scriptStartMs: () => T0, firstRenderMs: () => firstRenderMs, interactiveMs: () => interactiveMs,
  };
  for (const [name, get] of Object.entries(props)) Object.defineProperty(api, name, { get, enumerable: true });
  window.kgView = Object.freeze(api);
})();
