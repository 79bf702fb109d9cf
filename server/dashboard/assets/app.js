// Argus dashboard: renders the page named by <main data-page> from the JSON
// API and polls it every second, so pages update live without a reload.
"use strict";

const app = document.getElementById("app");
const live = document.getElementById("live");
const page = app.dataset.page;
const POLL_MS = 1000;
let lastBody = "";
let info = { admin: false };

function esc(s) {
  return String(s === undefined || s === null ? "" : s).replace(/[&<>"']/g, c =>
    ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}
function badge(s) { return `<span class="badge s-${esc(s)}">${esc(s)}</span>`; }
function when(ms) {
  ms = Number(ms);
  if (!ms) return "-";
  const d = new Date(ms);
  return d.toISOString().replace("T", " ").slice(0, 19);
}
function ago(ms, now) {
  const s = Math.max(0, Math.round((Number(now) - Number(ms)) / 1000));
  return s < 90 ? `${s}s ago` : `${Math.round(s / 60)} min ago`;
}
async function getJson(url) {
  const r = await fetch(url, { cache: "no-store" });
  const body = await r.json().catch(() => ({ error: `HTTP ${r.status}` }));
  if (!r.ok) { const e = new Error(body.error || `HTTP ${r.status}`); e.status = r.status; throw e; }
  return body;
}

// ---- job list -------------------------------------------------------------
function filtersFromUrl() {
  const q = new URLSearchParams(location.search);
  return { state: q.get("state") || "", kind: q.get("kind") || "" };
}
function renderJobs(data) {
  const f = filtersFromUrl();
  const opt = (vals, cur) => vals.map(v => `<option value="${v}"${v === cur ? " selected" : ""}>${v || "all"}</option>`).join("");
  const rows = data.jobs.map(j => `<tr class="job-row" data-id="${esc(j.id)}">
      <td><a href="/jobs/${encodeURIComponent(j.id)}"><code>${esc(j.id)}</code></a></td>
      <td>${esc(j.kind)}</td><td>${badge(j.state)}</td>
      <td>${esc(j.family || "")} ${esc(j.target || "")}</td>
      <td>${esc(j.client)}</td><td>${when(j.created_unix_ms)}</td>
      <td class="error">${esc(j.error)}</td></tr>`).join("");
  return `<h1>Jobs</h1>
    <div class="filters">
      <label>state <select id="f-state">${opt(["", "queued", "running", "succeeded", "failed", "cancelled"], f.state)}</select></label>
      <label>kind <select id="f-kind">${opt(["", "probe", "tune"], f.kind)}</select></label>
      <span class="muted" id="job-count">${data.jobs.length} job(s)</span>
    </div>
    <table id="jobs-table"><thead><tr><th>id</th><th>kind</th><th>state</th><th>problem</th>
      <th>client</th><th>created (UTC)</th><th>error</th></tr></thead>
      <tbody>${rows || `<tr><td colspan="7" class="muted">no jobs</td></tr>`}</tbody></table>`;
}
function bindJobs() {
  for (const id of ["f-state", "f-kind"]) {
    const el = document.getElementById(id);
    if (!el) continue;
    el.onchange = () => {
      const f = { state: document.getElementById("f-state").value, kind: document.getElementById("f-kind").value };
      const q = new URLSearchParams();
      if (f.state) q.set("state", f.state);
      if (f.kind) q.set("kind", f.kind);
      history.replaceState(null, "", "/jobs" + (q.toString() ? "?" + q : ""));
      lastBody = "";
      tick();
    };
  }
}

// ---- one job --------------------------------------------------------------
function speedOf(c) {
  const d = c.detail || {};
  for (const k of ["speedup", "ratio", "reward"]) if (typeof d[k] === "number") return d[k];
  return null;
}
function verdictOf(c) {
  const d = c.detail || {};
  if (d.verdict) return d.verdict;
  if ((d.diagnostics || []).length) return "rejected";
  return speedOf(c) !== null ? "measured" : "pending";
}
// Points in trajectory order: one per candidate (x = candidate number).
function points(job) {
  const byId = new Map(job.candidates.map(c => [c.id, c]));
  const seen = new Set();
  const pts = [];
  for (const s of job.trajectory_steps) {
    const c = byId.get(s.candidate_id);
    if (!c || seen.has(c.id)) continue;
    seen.add(c.id);
    pts.push({ c, y: speedOf(c) !== null ? speedOf(c) : (verdictOf(c) === "rejected" ? null : s.reward), v: verdictOf(c) });
  }
  for (const c of job.candidates) if (!seen.has(c.id)) pts.push({ c, y: speedOf(c), v: verdictOf(c) });
  pts.forEach((p, i) => { p.x = i + 1; });
  return pts;
}
function plot(pts) {
  const W = 760, H = 280, L = 70, R = 16, T = 14, B = 40;
  const ys = pts.filter(p => p.y !== null).map(p => p.y);
  const ymax = Math.max(1.2, ...ys) * 1.1, xmax = Math.max(2, pts.length);
  const X = x => L + (x - 1) / (xmax - 1) * (W - L - R);
  const Y = y => H - B - (y / ymax) * (H - T - B);
  let g = "";
  const ticks = 5;
  for (let i = 0; i <= ticks; i++) {
    const v = ymax * i / ticks;
    g += `<line x1="${L}" x2="${W - R}" y1="${Y(v)}" y2="${Y(v)}" stroke="#eceff2"/>` +
         `<text x="${L - 6}" y="${Y(v) + 4}" text-anchor="end" font-size="11" fill="#6a7380">${v.toFixed(2)}×</text>`;
  }
  const xstep = Math.max(1, Math.ceil(xmax / 10));
  for (let x = 1; x <= xmax; x += xstep)
    g += `<text x="${X(x)}" y="${H - B + 16}" text-anchor="middle" font-size="11" fill="#6a7380">${x}</text>`;
  g += `<text x="${(L + W - R) / 2}" y="${H - 6}" text-anchor="middle" font-size="12" fill="#333">candidate number</text>`;
  g += `<text transform="translate(16 ${(T + H - B) / 2}) rotate(-90)" text-anchor="middle" font-size="12" fill="#333">speed-up vs vendor</text>`;
  g += `<line x1="${L}" x2="${W - R}" y1="${Y(1)}" y2="${Y(1)}" stroke="#999" stroke-dasharray="4 3"/>` +
       `<text x="${W - R}" y="${Y(1) - 4}" text-anchor="end" font-size="10" fill="#777">vendor baseline</text>`;
  // Best-so-far: a step line over the measured points.
  let best = null, path = "";
  for (const p of pts) {
    if (p.y !== null && p.v !== "rejected" && (best === null || p.y > best)) best = p.y;
    if (best === null) continue;
    path += (path ? `L${X(p.x)},${Y(best)}` : `M${X(p.x)},${Y(best)}`);
    if (pts[p.x]) path += `L${X(pts[p.x].x)},${Y(best)}`;
  }
  if (path) g += `<path id="best-line" d="${path}" fill="none" stroke="#1a7f37" stroke-width="2"/>`;
  for (const p of pts) {
    const tip = `<title>#${p.x} ${esc(p.c.id)}: ${esc(p.v)}${p.y !== null ? " " + p.y.toFixed(3) + "×" : ""}</title>`;
    if (p.v === "rejected" || p.y === null) {
      const x = X(p.x), y = Y(0) - 6;
      g += `<g class="pt rejected"><path d="M${x - 4},${y - 4}L${x + 4},${y + 4}M${x - 4},${y + 4}L${x + 4},${y - 4}" stroke="#c62828" stroke-width="2"/>${tip}</g>`;
    } else {
      g += `<circle class="pt measured" cx="${X(p.x)}" cy="${Y(p.y)}" r="4.5" fill="#0b62c4">${tip}</circle>`;
    }
  }
  g += `<line x1="${L}" x2="${L}" y1="${T}" y2="${H - B}" stroke="#888"/><line x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}" stroke="#888"/>`;
  return `<svg id="plot-svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="speed-up per candidate">${g}</svg>
    <div class="muted">● measured candidate · <span style="color:#c62828">✕</span> rejected by the verifier · <span style="color:#1a7f37">━</span> best so far</div>`;
}
function sourceView(c) {
  const d = c.detail || {};
  const inv = new Map();
  for (const i of d.invariants || []) if (i.line) inv.set(Number(i.line), (inv.has(Number(i.line)) ? inv.get(Number(i.line)) + "; " : "") + (i.text || i.name || "proved"));
  const lines = String(c.source).split("\n").map((l, i) => {
    const n = i + 1;
    return inv.has(n) ? `<span class="ln inv" data-n="${n}" data-inv="${esc(inv.get(n))}">${esc(l)}</span>`
                      : `<span class="ln" data-n="${n}">${esc(l)}</span>`;
  }).join("");
  return `<pre class="src" id="best-source">${lines}</pre>`;
}
function cexText(x) {
  if (!x) return "";
  if (typeof x === "string") return x;
  if (x.text) return x.text;
  // The verifier's shape first (thread, element, iteration, expected, found), then the rest.
  const val = v => (v && typeof v === "object" ? Object.entries(v).map(([a, b]) => `${a}=${b}`).join(", ") : v);
  const order = ["thread", "element", "iteration", "expected", "found"];
  const parts = order.filter(k => k in x).map(k => `${k} ${val(x[k])}`);
  for (const [k, v] of Object.entries(x)) if (!order.includes(k)) parts.push(`${k} ${val(v)}`);
  return parts.join(", ");
}
function rejectedView(pts) {
  const rej = pts.filter(p => p.v === "rejected");
  if (!rej.length) return `<p class="muted">No candidate was rejected.</p>`;
  return rej.map(p => {
    const ds = (p.c.detail || {}).diagnostics || [];
    const items = ds.map(d => `<div class="diag"><b>${esc(d.file || "kernel.py")}:${esc(d.line || "?")}:${esc(d.col || d.column || "?")}</b> ${esc(d.message)}
        ${d.counterexample ? `<pre class="counterexample">${esc(cexText(d.counterexample))}</pre>` : ""}</div>`).join("");
    return `<div class="cex" data-candidate="${esc(p.c.id)}"><div>candidate #${p.x} <code>${esc(p.c.id)}</code> ${badge("rejected")}
        ${p.c.detail && p.c.detail.action ? esc(p.c.detail.action) : ""}</div>${items || `<div class="muted">no diagnostics recorded</div>`}</div>`;
  }).join("");
}
function probeView(job) {
  return job.tasks.filter(t => t.result && t.result.devices).map(t => {
    const inv = t.result;
    const devs = (inv.devices || []).map(d => `<li>${esc(d.backend)} #${esc(d.index || 0)} <b>${esc(d.arch)}</b> ${esc(d.name || "")}</li>`).join("");
    return `<div class="card probe"><div>worker <code>${esc(t.worker_id)}</code> on <b>${esc(inv.hostname || "?")}</b></div><ul>${devs}</ul></div>`;
  }).join("");
}
// Candidates tried of the budget, elapsed and time left (tune jobs).
function budget(p, finished) {
  const clock = ms => { const s = Math.floor(ms / 1000); return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`; };
  return `${p.tried}/${p.max_candidates} · ${clock(p.elapsed_ms)}${finished ? "" : ` · ${clock(p.remaining_ms)} left`}`;
}
function renderJob(job) {
  const pts = points(job);
  const measured = pts.filter(p => p.v !== "rejected" && p.y !== null);
  const best = measured.reduce((a, p) => (a === null || p.y > a.y ? p : a), null);
  const finished = ["succeeded", "failed", "cancelled"].includes(job.state);
  const tasks = job.tasks.map(t => `<tr><td><code>${esc(t.id)}</code></td><td>${esc(t.kind)}</td><td>${badge(t.state)}</td>
      <td><code>${esc(t.worker_id || "-")}</code></td><td>${esc(t.attempts)}</td></tr>`).join("");
  let h = `<h1>Job <code id="job-id">${esc(job.id)}</code> <span id="job-state">${badge(job.state)}</span></h1>
    <div class="muted">kind <b id="job-kind">${esc(job.kind)}</b> · ${esc(job.family || "")} ${esc(job.target || "")} · client ${esc(job.client)} · created ${when(job.created_unix_ms)} UTC</div>
    ${job.error ? `<p class="error" id="job-error">${esc(job.error)}</p>` : ""}
    ${info.admin && !finished ? `<p><button id="cancel">Cancel job</button> <span class="muted">needs the admin token</span></p>` : ""}
    <div class="cards">
      <div class="card">tasks<b id="tasks-done">${job.tasks_done}/${job.tasks_total}</b></div>
      <div class="card">candidates<b id="n-candidates">${pts.length}</b></div>
      <div class="card">verified/measured<b>${measured.length}</b></div>
      <div class="card">rejected<b id="n-rejected">${pts.filter(p => p.v === "rejected").length}</b></div>
      <div class="card">best speed-up<b id="best-speedup">${best ? best.y.toFixed(3) + "×" : "-"}</b></div>
      ${job.progress ? `<div class="card">budget<b id="budget">${budget(job.progress, finished)}</b></div>` : ""}
    </div>`;
  if (pts.length) {
    h += `<h2>Speed-up per candidate</h2><div class="plot" id="plot">${plot(pts)}</div>`;
    if (best) h += `<h2>Best kernel: candidate #${best.x} <code>${esc(best.c.id)}</code> (${best.y.toFixed(3)}×)</h2>
      <div class="muted">highlighted lines carry invariants the verifier proved</div>${sourceView(best.c)}`;
    h += `<h2>Rejected candidates and their counterexamples</h2><div id="rejected">${rejectedView(pts)}</div>`;
  } else if (job.kind === "probe") {
    h += `<h2>Worker inventories</h2><div class="cards" id="probe-results">${probeView(job) || `<span class="muted">no results yet</span>`}</div>`;
  }
  h += `<h2>Tasks</h2><table id="tasks-table"><thead><tr><th>task</th><th>kind</th><th>state</th><th>worker</th><th>attempts</th></tr></thead>
    <tbody>${tasks || `<tr><td colspan="5" class="muted">no tasks</td></tr>`}</tbody></table>`;
  return h;
}
function bindJob(job) {
  const b = document.getElementById("cancel");
  if (!b) return;
  b.onclick = async () => {
    let tok = sessionStorage.getItem("argus-admin-token") || prompt("admin token");
    if (!tok) return;
    const r = await fetch(`/api/jobs/${encodeURIComponent(job.id)}/cancel`, { method: "POST", headers: { Authorization: "Bearer " + tok } });
    if (r.ok) sessionStorage.setItem("argus-admin-token", tok); else { sessionStorage.removeItem("argus-admin-token"); alert((await r.json()).error); }
    lastBody = ""; tick();
  };
}

// ---- workers --------------------------------------------------------------
function renderWorkers(data) {
  const rows = data.workers.map(w => {
    const inv = w.inventory || {};
    const devs = (inv.devices || []).map(d => `${esc(d.arch)} <span class="muted">${esc(d.name || d.backend)}${d.memory_bytes && Number(d.memory_bytes) ? " · " + (Number(d.memory_bytes) / 2 ** 30).toFixed(0) + " GiB" : ""}</span>`).join("<br>");
    const rts = Object.entries(inv.runtimes || {}).map(([k, v]) => `<div><code>${esc(k)}</code>: ${esc(v)}</div>`).join("");
    return `<tr class="worker-row" data-id="${esc(w.id)}"><td><code>${esc(w.id)}</code></td><td>${badge(w.alive ? "alive" : "dead")}</td>
      <td>${esc(inv.hostname)}</td><td>${devs || "-"}</td><td class="muted">${rts}</td><td>${esc(w.leased_tasks)}</td>
      <td>${ago(w.last_heartbeat_unix_ms, data.now_unix_ms)}</td><td class="muted">${esc(inv.worker_version)}</td></tr>`;
  }).join("");
  const alive = data.workers.filter(w => w.alive).length;
  return `<h1>Worker fleet</h1><p class="muted" id="worker-count">${alive} alive of ${data.workers.length}</p>
    <table id="workers-table"><thead><tr><th>worker</th><th>health</th><th>host</th><th>devices</th><th>runtimes</th>
    <th>leases</th><th>heartbeat</th><th>version</th></tr></thead><tbody>${rows || `<tr><td colspan="8" class="muted">no workers registered</td></tr>`}</tbody></table>`;
}

// ---- the loop -------------------------------------------------------------
async function tick() {
  try {
    let data, html, bind = () => {};
    if (page === "jobs") {
      const f = filtersFromUrl();
      const q = new URLSearchParams();
      if (f.state) q.set("state", f.state);
      if (f.kind) q.set("kind", f.kind);
      data = await getJson("/api/jobs?" + q);
      html = () => renderJobs(data); bind = bindJobs;
    } else if (page === "job") {
      const id = decodeURIComponent(location.pathname.slice("/jobs/".length));
      data = await getJson("/api/jobs/" + encodeURIComponent(id));
      html = () => renderJob(data); bind = () => bindJob(data);
    } else if (page === "workers") {
      data = await getJson("/api/workers");
      html = () => renderWorkers(data);
    } else {
      return;
    }
    const body = JSON.stringify(data, (k, v) => (k === "now_unix_ms" && page !== "workers" ? undefined : v));
    if (body !== lastBody) {
      lastBody = body;
      app.innerHTML = html();
      bind();
    }
    live.textContent = "live · updated " + new Date().toLocaleTimeString();
    live.classList.remove("lost");
  } catch (e) {
    if (e.status === 404) { app.innerHTML = `<h1 id="not-found">404 — not found</h1><p>${esc(e.message)}</p><p><a href="/jobs">Back to the job list</a></p>`; return; }
    live.textContent = "connection lost, retrying…";
    live.classList.add("lost");
  }
  setTimeout(tick, POLL_MS);
}

(async () => {
  try { info = await getJson("/api/info"); } catch (e) { /* read-only */ }
  tick();
})();
