// The decision inspector page of `recallwise serve` (GET /ui): plain JavaScript, no build step,
// no third-party code. Every text that came from a user or a memory is set with textContent (never
// parsed as HTML); the charts are SVG elements made here; the key is kept in this tab's
// sessionStorage and sent as `Authorization: Bearer`, never as a cookie.
"use strict";

(() => {
  const KEY_STORE = "recallwise.inspector.key";
  const SVG_NS = "http://www.w3.org/2000/svg";
  const state = {
    turns: [],
    cursor: null, // the cursor of the page shown (null: the newest)
    next: null, // the cursor of the older page
    selected: -1,
    candidate: -1,
    contentLogged: false,
    refitShown: false, // a refit preview is on the page (a new label makes it stale)
  };

  // ---- small helpers -------------------------------------------------------------------------------
  const $ = (selector) => document.querySelector(selector);

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "class") node.className = value;
      else if (name === "text") node.textContent = value;
      else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (name === "text") node.textContent = value;
      else node.setAttribute(name, String(value));
    }
    for (const child of children) node.append(child);
    return node;
  }

  const fixed = (x, digits = 2) => (x === null || x === undefined ? "–" : Number(x).toFixed(digits));
  const when = (iso) => (iso || "").replace("T", " ").slice(0, 19);

  function status(message, kind = "") {
    const node = $("#status");
    node.textContent = message;
    node.className = "status " + kind;
  }

  function notice(message) {
    const node = $("#notice");
    node.textContent = message || "";
    node.hidden = !message;
  }

  // ---- the API ----------------------------------------------------------------------------------------
  const storedKey = () => sessionStorage.getItem(KEY_STORE) || "";

  // GET without a body, POST with one; `method` says otherwise (a refit preview is a POST: it computes)
  async function api(path, body, method) {
    const headers = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    const key = storedKey();
    if (key) headers.authorization = "Bearer " + key;
    const response = await fetch(path, {
      method: method || (body === undefined ? "GET" : "POST"),
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "omit",
      cache: "no-store",
    });
    let data = null;
    try {
      data = await response.json();
    } catch (_) {
      data = null;
    }
    if (!response.ok) {
      const error = new Error((data && data.error && data.error.message) || "HTTP " + response.status);
      error.status = response.status;
      throw error;
    }
    return data;
  }

  function filters() {
    const form = $("#filters");
    const params = new URLSearchParams();
    for (const name of ["actor_id", "session_id", "opened", "errors", "limit"]) {
      const value = form.elements[name].value.trim();
      if (value) params.set(name, value);
    }
    return params;
  }

  async function load(cursor) {
    const params = filters();
    if (cursor) params.set("cursor", String(cursor));
    status("loading…");
    let page;
    try {
      page = await api("/v1/decisions?" + params.toString());
    } catch (error) {
      failed(error);
      return;
    }
    state.turns = page.decisions;
    state.cursor = cursor || null;
    state.next = page.next_cursor;
    state.contentLogged = page.content_logged;
    state.selected = -1;
    state.candidate = -1;
    notice(
      page.content_logged
        ? ""
        : "Messages and memory text are not logged (start recallwise serve with --log-content to see them): " +
            "ids, scores and decisions only."
    );
    render();
    status(state.turns.length + " turn(s) shown" + (state.next ? "; older turns on the next page" : ""));
  }

  function failed(error) {
    if (error.status === 401 || error.status === 403) {
      $("#key-form").hidden = false;
      status(error.message + ": enter a key with the admin scope", "error");
    } else if (error.status === 404) {
      notice(error.message);
      status("");
    } else {
      status(error.message, "error");
    }
  }

  // ---- the list ---------------------------------------------------------------------------------------
  function render() {
    const body = $("#turns tbody");
    body.replaceChildren(...state.turns.map(row));
    if (!state.turns.length) {
      body.append(el("tr", {}, el("td", { colspan: 12, class: "empty", text: "no turns match" })));
    }
    $("#older").disabled = !state.next;
    $("#newest").disabled = !state.cursor;
    $("#page-info").textContent = state.cursor ? "older turns" : "newest turns";
    drawGateChart();
    drawTokenChart();
    renderDetail();
  }

  function gateCell(turn) {
    if (turn.gate_open === null) return "–";
    const label = turn.gate_open ? "opened" : "closed";
    return turn.failed_open.includes("gate") ? label + " (failed open)" : label;
  }

  function labelText(turn) {
    const records = turn.candidates.filter((c) => c.label !== null).length;
    const parts = [];
    if (turn.label !== null) parts.push(turn.label === turn.gate_open ? "gate right" : "gate wrong");
    if (records) parts.push(records + " record(s)");
    return parts.join(", ") || "–";
  }

  function row(turn, index) {
    const route = turn.route
      ? Object.entries(turn.route)
          .map(([ns, p]) => ns + " " + fixed(p))
          .join(", ")
      : turn.namespaces_searched.join(", ") || "–";
    const errors = turn.errors.length + (turn.failed_open.length ? " (failed open: " + turn.failed_open.join(", ") + ")" : "");
    return el(
      "tr",
      {
        class: [index === state.selected ? "selected" : "", turn.errors.length ? "errored" : ""].join(" ").trim(),
        "data-id": turn.id,
        onclick: () => select(index),
      },
      el("td", { text: when(turn.time) }),
      el("td", { text: turn.actor_id }),
      el("td", { text: turn.session_id || "–" }),
      el("td", { class: "replica", text: turn.replica || "–" }),
      el("td", { class: "message", text: turn.message === undefined ? "(not logged)" : turn.message }),
      el("td", { class: "num", text: fixed(turn.gate_p) + " / " + fixed(turn.gate_threshold) }),
      el("td", { class: turn.gate_open ? "open" : "closed", text: gateCell(turn) }),
      el("td", { text: route }),
      el("td", { class: "num", text: turn.kept + " / " + turn.dropped }),
      el("td", { class: "num", text: turn.context_tokens + " / " + (turn.stock_tokens === null ? "–" : turn.stock_tokens) }),
      el("td", { class: "num", text: errors }),
      el("td", { class: "label", text: labelText(turn) })
    );
  }

  // ---- the charts ---------------------------------------------------------------------------------------
  const W = 420;
  const H = 150;
  const PAD = { left: 34, right: 10, top: 10, bottom: 26 };

  function axes(root, xLabels, yMax) {
    const x0 = PAD.left;
    const y0 = H - PAD.bottom;
    root.append(svg("line", { x1: x0, y1: y0, x2: W - PAD.right, y2: y0, class: "axis" }));
    root.append(svg("line", { x1: x0, y1: PAD.top, x2: x0, y2: y0, class: "axis" }));
    root.append(svg("text", { x: x0 - 4, y: PAD.top + 8, class: "tick end", text: String(yMax) }));
    root.append(svg("text", { x: x0 - 4, y: y0, class: "tick end", text: "0" }));
    for (const [x, text, anchor] of xLabels) {
      root.append(svg("text", { x, y: H - 8, class: "tick " + anchor, text }));
    }
  }

  function drawGateChart() {
    const figure = $("#chart-gate");
    figure.querySelector("svg")?.remove();
    const ps = state.turns.filter((t) => t.gate_p !== null);
    const bins = 10;
    const opened = new Array(bins).fill(0);
    const closed = new Array(bins).fill(0);
    for (const t of ps) {
      const bin = Math.min(bins - 1, Math.floor(t.gate_p * bins));
      (t.gate_open ? opened : closed)[bin] += 1;
    }
    const top = Math.max(1, ...opened.map((n, i) => n + closed[i]));
    const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img" });
    const plotW = W - PAD.left - PAD.right;
    const plotH = H - PAD.top - PAD.bottom;
    const x = (p) => PAD.left + p * plotW;
    const y = (n) => H - PAD.bottom - (n / top) * plotH;
    let bars = 0;
    for (let i = 0; i < bins; i++) {
      const left = x(i / bins) + 1;
      const width = plotW / bins - 2;
      if (closed[i]) {
        root.append(svg("rect", { x: left, y: y(closed[i]), width, height: y(0) - y(closed[i]), class: "bar closed", "data-count": closed[i] }));
        bars += 1;
      }
      if (opened[i]) {
        const base = closed[i];
        root.append(
          svg("rect", { x: left, y: y(base + opened[i]), width, height: y(base) - y(base + opened[i]), class: "bar opened", "data-count": opened[i] })
        );
        bars += 1;
      }
    }
    const thresholds = ps.map((t) => t.gate_threshold).filter((v) => v !== null);
    if (thresholds.length) {
      const counts = new Map();
      for (const v of thresholds) counts.set(v, (counts.get(v) || 0) + 1);
      const threshold = [...counts.entries()].sort((a, b) => b[1] - a[1])[0][0];
      root.append(svg("line", { x1: x(threshold), y1: PAD.top, x2: x(threshold), y2: y(0), class: "threshold" }));
      root.append(svg("text", { x: x(threshold) + 3, y: PAD.top + 8, class: "tick", text: "threshold " + fixed(threshold) }));
    }
    axes(root, [[x(0), "0", "start"], [x(0.5), "0.5", "middle"], [x(1), "1", "end"]], top);
    figure.dataset.points = String(ps.length);
    figure.dataset.bars = String(bars);
    figure.prepend(root);
    figure.querySelector("figcaption").textContent =
      `Gate p of the ${ps.length} shown turn(s) with an answer: opened (blue) and closed (grey), against the threshold`;
  }

  function drawTokenChart() {
    const figure = $("#chart-tokens");
    figure.querySelector("svg")?.remove();
    const turns = [...state.turns].reverse(); // oldest first
    const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img" });
    let saved = 0;
    let injected = 0;
    let stock = 0;
    let known = 0;
    const points = [];
    for (const t of turns) {
      if (t.stock_tokens !== null) {
        saved += t.stock_tokens - t.context_tokens;
        stock += t.stock_tokens;
        injected += t.context_tokens;
        known += 1;
      }
      points.push(saved);
    }
    const unknown = turns.length - known;
    const top = Math.max(1, ...points);
    const bottom = Math.min(0, ...points);
    const plotW = W - PAD.left - PAD.right;
    const plotH = H - PAD.top - PAD.bottom;
    const x = (i) => PAD.left + (turns.length > 1 ? (i / (turns.length - 1)) * plotW : plotW / 2);
    const y = (v) => H - PAD.bottom - ((v - bottom) / (top - bottom)) * plotH;
    if (points.length) {
      const d = points.map((v, i) => (i ? "L" : "M") + x(i).toFixed(1) + " " + y(v).toFixed(1)).join(" ");
      root.append(svg("path", { d, class: "saved" }));
      points.forEach((v, i) => root.append(svg("circle", { cx: x(i), cy: y(v), r: 2.5, class: turns[i].stock_tokens === null ? "unknown" : "known" })));
    }
    const first = turns.length ? when(turns[0].time).slice(5, 16) : "";
    const last = turns.length ? when(turns[turns.length - 1].time).slice(5, 16) : "";
    axes(root, [[x(0), first, "start"], [x(Math.max(turns.length - 1, 0)), last, "end"]], top);
    figure.dataset.points = String(points.length);
    figure.prepend(root);
    figure.querySelector("figcaption").textContent =
      `Tokens saved over time (cumulative): ${injected} injected where the stock arm would have injected ${stock}, ` +
      `over the ${known} shown turn(s) that searched what it searches` +
      (unknown ? `; ${unknown} turn(s) searched less (a closed gate, a route): what stock would have injected there is not known (hollow points)` : "");
  }

  // ---- one turn --------------------------------------------------------------------------------------------
  function select(index) {
    if (index < 0 || index >= state.turns.length) return;
    state.selected = index;
    state.candidate = state.turns[index].candidates.length ? 0 : -1;
    for (const [i, tr] of [...document.querySelectorAll("#turns tbody tr")].entries()) {
      tr.classList.toggle("selected", i === index);
    }
    renderDetail();
    document.querySelector("#turns tbody tr.selected")?.scrollIntoView({ block: "nearest" });
  }

  function fact(name, value) {
    return el("div", { class: "fact" }, el("dt", { text: name }), el("dd", { text: value }));
  }

  function renderDetail() {
    const section = $("#detail");
    const turn = state.turns[state.selected];
    if (!turn) {
      section.hidden = true;
      section.replaceChildren();
      return;
    }
    section.hidden = false;
    const gateLabel =
      turn.label === null
        ? "not labelled"
        : (turn.label === turn.gate_open ? "right" : "wrong") + (turn.label ? " (memory was needed)" : " (memory was not needed)");
    const facts = el(
      "dl",
      { class: "facts" },
      fact("gate", `p ${fixed(turn.gate_p, 3)} against ${fixed(turn.gate_threshold, 3)}: ${gateCell(turn)}`),
      turn.follow_up_p !== null ? fact("follow-up p", fixed(turn.follow_up_p, 3)) : null,
      fact("route", turn.route ? Object.entries(turn.route).map(([ns, p]) => `${ns} ${fixed(p)}`).join(", ") : "–"),
      fact("searched", turn.namespaces_searched.join(", ") || "nothing"),
      fact("keep rule", turn.keep_rule || "–"),
      fact("tokens", `${turn.context_tokens} injected; the stock arm: ${turn.stock_tokens === null ? "not known (the turn searched less)" : turn.stock_tokens}`),
      fact("decider", turn.decider + (turn.total_ms !== null ? `, ${fixed(turn.total_ms, 1)} ms` : "")),
      fact("replica", turn.replica || "not named"),
      turn.errors.length ? fact("errors", turn.errors.join("; ")) : null,
      turn.failed_open.length ? fact("failed open", turn.failed_open.join(", ")) : null,
      turn.notes.length ? fact("notes", turn.notes.join("; ")) : null
    );
    const gateButtons = el(
      "div",
      { class: "labels" },
      el("span", { text: "The gate was " }),
      el("button", { type: "button", id: "gate-right", onclick: () => labelGate(true) }, "right (r)"),
      el("button", { type: "button", id: "gate-wrong", onclick: () => labelGate(false) }, "wrong (w)"),
      el("span", { id: "gate-label", class: "current", text: "label: " + gateLabel })
    );
    const rows = turn.candidates.map((c, i) =>
      el(
        "tr",
        { class: [i === state.candidate ? "selected" : "", c.kept ? "kept" : "dropped"].join(" ").trim(), "data-id": c.id, onclick: () => pickCandidate(i) },
        el("td", { class: "num", text: String(i + 1) }),
        el("td", { class: "text", text: c.text === undefined ? "(not logged) " + c.id : c.text }),
        el("td", { text: c.namespace }),
        el("td", { class: "num", text: fixed(c.score, 3) }),
        el("td", { class: "num", text: fixed(c.judge_p, 3) }),
        el("td", { class: c.kept ? "open" : "closed", text: c.kept ? "kept" : "dropped" }),
        el("td", { class: "reason", text: c.reason }),
        el(
          "td",
          { class: "label" },
          el("button", { type: "button", class: "belongs", onclick: (e) => (e.stopPropagation(), labelRecord(i, true)) }, "belongs"),
          el("button", { type: "button", class: "not", onclick: (e) => (e.stopPropagation(), labelRecord(i, false)) }, "does not"),
          el("span", { class: "current", text: c.label === null ? "" : c.label ? "belongs" : "does not belong" })
        )
      )
    );
    const candidates = turn.candidates.length
      ? el(
          "table",
          { class: "candidates" },
          el("thead", {}, el("tr", {}, ...["#", "record", "namespace", "score", "judge p", "decision", "reason", "label"].map((h) => el("th", { text: h })))),
          el("tbody", {}, ...rows)
        )
      : el("p", { class: "empty", text: "No candidates: nothing was searched this turn." });
    section.replaceChildren(
      el("h2", { text: `Decision ${turn.id} · ${when(turn.time)} · ${turn.actor_id}` }),
      el("p", { class: "message", text: turn.message === undefined ? "(message not logged)" : turn.message }),
      facts,
      gateButtons,
      el("h3", { text: `Candidates: ${turn.kept} kept, ${turn.dropped} dropped` }),
      candidates
    );
  }

  function pickCandidate(index) {
    const turn = state.turns[state.selected];
    if (!turn || index < 0 || index >= turn.candidates.length) return;
    state.candidate = index;
    for (const [i, tr] of [...document.querySelectorAll("#detail .candidates tbody tr")].entries()) {
      tr.classList.toggle("selected", i === index);
    }
  }

  // ---- labels ---------------------------------------------------------------------------------------------------
  async function send(turn, body) {
    status("saving the label…");
    try {
      const labelled = await api("/v1/labels", { decision_id: turn.id, ...body });
      turn.label = labelled.label === undefined ? null : labelled.label;
      const records = new Map((labelled.records || []).map((r) => [r.id, r.label]));
      for (const c of turn.candidates) c.label = records.has(c.id) ? records.get(c.id) : null;
      const index = state.turns.indexOf(turn);
      const old = document.querySelectorAll("#turns tbody tr")[index];
      if (old) old.replaceWith(row(turn, index));
      if (state.turns[state.selected] === turn) {
        const keep = state.candidate;
        renderDetail();
        pickCandidate(keep);
      }
      status(`label saved for decision ${turn.id}`, "ok");
      if (state.refitShown) $("#refit-state").textContent = "labels changed since this preview: f to preview again";
    } catch (error) {
      failed(error);
    }
  }

  function labelGate(right) {
    const turn = state.turns[state.selected];
    if (!turn) return;
    if (turn.gate_open === null) {
      status("this turn had nothing to decide: no gate to label", "error");
      return;
    }
    // the label says whether memory was needed: "right" about an opened gate means it was
    send(turn, { gate: right ? turn.gate_open : !turn.gate_open });
  }

  function labelRecord(index, belongs) {
    const turn = state.turns[state.selected];
    if (!turn || !turn.candidates[index]) return;
    state.candidate = index;
    send(turn, { records: { [turn.candidates[index].id]: belongs } });
  }

  // ---- the refit preview ---------------------------------------------------------------------------------------------
  // Each row: the figure's key in the answer's before / after, its name, and which way is better
  // (1 higher, -1 lower, 0 neither: an operating point).
  const REFIT_ROWS = {
    gate: [
      ["accuracy", "accuracy", 1],
      ["auc", "AUC", 1],
      ["ece", "ECE (calibration error)", -1],
      ["open_rate_true", "opens when memory was needed", 1],
      ["closed_rate_false", "closes when it was not", 1],
      ["threshold", "threshold", 0],
    ],
    judge: [
      ["accuracy", "accuracy", 1],
      ["auc", "AUC (pooled)", 1],
      ["mean_auc", "AUC (per turn)", 1],
      ["ece", "ECE (calibration error)", -1],
      ["right_kept", "right records kept", 1],
      ["records_kept_per_request", "records kept per request", 0],
      ["records_kept_per_general_turn", "records kept per general turn", 0],
      ["keep_threshold", "keep threshold", 0],
    ],
  };
  const HEAD_NAMES = { gate: "Gate", judge: "Judge" };

  function figure(figures, key) {
    return key === "keep_threshold" ? figures.keep_rule.absolute : figures[key];
  }

  function refitRow([key, name, better], preview) {
    const before = figure(preview.before, key);
    const after = figure(preview.after, key);
    let verdict = "";
    if (better && before !== null && after !== null && Math.abs(after - before) > 1e-9) {
      verdict = (after - before) * better > 0 ? "better" : "worse";
    }
    return el(
      "tr",
      { "data-key": key },
      el("th", { text: name }),
      el("td", { class: "num before", "data-value": before === null ? "" : String(before), text: fixed(before, 3) }),
      el("td", { class: ["num after", verdict].join(" ").trim(), "data-value": after === null ? "" : String(after), text: fixed(after, 3) })
    );
  }

  function renderRefit(panel, preview) {
    const head = preview.head;
    const counted =
      `${preview.turns} labelled turn(s)` +
      (head === "judge" ? ` (${preview.before.n} labelled records the search returned)` : "") +
      `; "after a refit" graded ${preview.graded_on} (each turn by a fit without it); fitted in ${fixed(preview.seconds, 1)} s`;
    const c = preview.commands;
    const parts = [
      el("h3", { text: HEAD_NAMES[head] }),
      el(
        "table",
        { class: "figures" },
        el("thead", {}, el("tr", {}, el("th"), el("th", { text: "now" }), el("th", { text: "after a refit" }))),
        el("tbody", {}, ...REFIT_ROWS[head].map((row) => refitRow(row, preview)))
      ),
      el("p", { class: "counted", text: counted }),
      preview.notes.length ? el("ul", { class: "notes" }, ...preview.notes.map((n) => el("li", { text: n }))) : null,
      el("p", { text: "To apply it, where the server runs (LOG: the file given to --log; $RECALLWISE_URL: this server's address): export the labels, fit and write the head, start the server with the config that names it:" }),
      el("pre", { class: "commands" }, el("code", { text: [c.export, c.fit, c.load].join("\n") })),
    ];
    panel.replaceChildren(...parts.filter((part) => part !== null));
  }

  async function refitPreview() {
    if (document.body.dataset.log === "off") return;
    $("#refit-run").disabled = true;
    $("#refit-state").textContent = "";
    state.refitShown = false;
    try {
      for (const head of ["gate", "judge"]) {
        const panel = $("#refit-" + head);
        panel.dataset.state = "fitting";
        panel.replaceChildren(el("h3", { text: HEAD_NAMES[head] }), el("p", { class: "current", text: "fitting on the labels…" }));
        status(`fitting the ${head} on the labels…`);
        try {
          // a POST: the fit runs while this request is open, and stops if the page goes away
          renderRefit(panel, await api("/v1/refit-preview/" + head, undefined, "POST"));
          panel.dataset.state = "shown";
          state.refitShown = true;
        } catch (error) {
          if (error.status === 401 || error.status === 403 || error.status === 404) {
            panel.replaceChildren();
            delete panel.dataset.state;
            failed(error);
            return;
          }
          panel.replaceChildren(el("h3", { text: HEAD_NAMES[head] }), el("p", { class: "refused", text: error.message }));
          panel.dataset.state = "refused";
        }
      }
      status("refit preview: nothing was written", "ok");
      $("#refit").scrollIntoView({ block: "nearest" });
    } finally {
      $("#refit-run").disabled = false;
    }
  }

  // ---- the keyboard ------------------------------------------------------------------------------------------------
  function onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target && ["INPUT", "SELECT", "TEXTAREA"].includes(target.tagName)) return;
    const turn = state.turns[state.selected];
    const actions = {
      j: () => select(state.selected + 1),
      k: () => select(state.selected - 1),
      n: () => pickCandidate(state.candidate + 1),
      p: () => pickCandidate(state.candidate - 1),
      r: () => labelGate(true),
      w: () => labelGate(false),
      b: () => turn && labelRecord(state.candidate, true),
      d: () => turn && labelRecord(state.candidate, false),
      f: () => refitPreview(),
      Escape: () => {
        state.selected = -1;
        render();
      },
    };
    const action = actions[event.key];
    if (action) {
      event.preventDefault();
      action();
    }
  }

  // ---- start ---------------------------------------------------------------------------------------------------------
  function start() {
    const keyForm = $("#key-form");
    const needsKey = document.body.dataset.keys === "required";
    keyForm.hidden = !needsKey;
    keyForm.addEventListener("submit", (event) => {
      event.preventDefault();
      const value = $("#key").value.trim();
      if (value) sessionStorage.setItem(KEY_STORE, value);
      $("#key").value = "";
      load(null);
    });
    $("#key-forget").addEventListener("click", () => {
      sessionStorage.removeItem(KEY_STORE);
      state.turns = [];
      render();
      status("key forgotten");
    });
    $("#filters").addEventListener("submit", (event) => {
      event.preventDefault();
      load(null);
    });
    $("#older").addEventListener("click", () => state.next && load(state.next));
    $("#newest").addEventListener("click", () => load(null));
    $("#refit-run").addEventListener("click", () => refitPreview());
    document.addEventListener("keydown", onKey);
    if (document.body.dataset.log === "off") {
      $("#refit").hidden = true;
      notice("This server keeps no decision log: start recallwise serve with --log FILE (and --log-content to see messages).");
      render();
      return;
    }
    if (needsKey && !storedKey()) {
      render();
      status("this server has API keys: enter a key with the admin scope");
      return;
    }
    load(null);
  }

  document.addEventListener("DOMContentLoaded", start);
})();
