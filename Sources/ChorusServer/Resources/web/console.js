const csrf = document.querySelector('meta[name="csrf-token"]').content;
const usd = (micros) => `$${(micros / 1e6).toFixed(2)}`;
function list(id, rows) {
  const target = document.getElementById(id);
  target.replaceChildren(...rows.flatMap(([name, value]) => {
    const dt = document.createElement('dt'); dt.textContent = name;
    const dd = document.createElement('dd'); dd.textContent = value;
    return [dt, dd];
  }));
  if (rows.length === 0) { const dd = document.createElement('dd'); dd.className = 'muted'; dd.textContent = 'none'; target.append(dd); }
}
function bars(id, values, format) {
  const width = 480, height = 120, max = Math.max(1, ...values), step = width / values.length;
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', `0 0 ${width} ${height + 14}`);
  values.forEach((value, index) => {
    const rect = document.createElementNS(ns, 'rect');
    const h = Math.round((value / max) * height);
    rect.setAttribute('x', index * step + 1); rect.setAttribute('y', height - h);
    rect.setAttribute('width', Math.max(1, step - 2)); rect.setAttribute('height', h); rect.setAttribute('class', 'bar');
    const title = document.createElementNS(ns, 'title'); title.textContent = format(value); rect.append(title);
    svg.append(rect);
  });
  const axis = document.createElementNS(ns, 'line');
  axis.setAttribute('x1', 0); axis.setAttribute('x2', width); axis.setAttribute('y1', height); axis.setAttribute('y2', height);
  axis.setAttribute('class', 'axis'); svg.append(axis);
  const label = document.createElementNS(ns, 'text');
  label.setAttribute('x', 0); label.setAttribute('y', height + 12); label.setAttribute('font-size', 11); label.setAttribute('fill', 'currentColor');
  label.textContent = `max ${format(max)}`; svg.append(label);
  document.getElementById(id).replaceChildren(svg);
}
async function refresh() {
  const response = await fetch('/console/api/overview', { credentials: 'same-origin' });
  if (response.status === 401 || response.status === 403) { location.href = '/console/login'; return; }
  const o = await response.json();
  const c = o.calls;
  list('calls', [['In progress', c.in_progress], ['Today', c.today], ['Answered today', c.answered_today],
    ['Answer rate', c.answer_rate == null ? '–' : `${Math.round(c.answer_rate * 100)} %`],
    ['Average duration', c.average_duration_seconds == null ? '–' : `${Math.round(c.average_duration_seconds)} s of ${Math.round(c.average_limit_seconds)} s`]]);
  bars('calls-chart', c.per_hour, (v) => `${v} calls`);
  list('reasons', c.ended_reasons.map((r) => [r.name, r.count]));
  list('users', [['Accounts', o.users.total], ...o.users.by_plan.map((p) => [`Plan: ${p.name}`, p.count])]);
  list('spend', o.spend.flatMap((s) => [[`${s.feature} today`, s.daily_budget_usd_micros == null ? usd(s.today_usd_micros) : `${usd(s.today_usd_micros)} of ${usd(s.daily_budget_usd_micros)}`],
    [`${s.feature} this month`, s.monthly_budget_usd_micros == null ? usd(s.month_usd_micros) : `${usd(s.month_usd_micros)} of ${usd(s.monthly_budget_usd_micros)}`]]));
  bars('spend-chart', o.spend.reduce((sum, s) => sum.map((v, i) => v + s.per_day[i]), new Array(14).fill(0)), usd);
  list('jobs', [['Pending', o.jobs.pending], ['Running', o.jobs.running], ['Failed', o.jobs.failed], ...o.jobs.failed_by_kind.map((k) => [`Failed: ${k.name}`, k.count])]);
  list('appstore', o.app_store_notifications.map((n) => [n.name, n.count]));
  const providers = document.getElementById('providers');
  providers.replaceChildren(...o.providers.map((p) => row([p.provider, p.operation, p.status, p.calls,
    `${(p.error_rate * 100).toFixed(1)} %`, p.p50_ms == null ? '–' : `${p.p50_ms} / ${p.p95_ms} ms`,
    p.last_failure == null ? '–' : `${p.last_failure} at ${new Date(p.last_failure_at).toLocaleTimeString()}`], { 2: p.status === 'ok' ? 'good' : 'bad' })));
  if (o.providers.length === 0) providers.replaceChildren(row(['No provider calls in the last 15 minutes', '', '', '', '', '', '']));
  const audit = await (await fetch('/console/api/audit', { credentials: 'same-origin' })).json();
  document.getElementById('audit').replaceChildren(...audit.entries.map((e) => {
    const li = document.createElement('li'); li.textContent = `${e.created_at} ${e.actor}: ${e.action} ${e.target} (${e.detail ?? ''})`; return li;
  }));
}
for (const form of document.querySelectorAll('form.action')) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const path = form.dataset.path.replace('{id}', encodeURIComponent(String(data.get('id')).trim()));
    data.delete('id');
    const fields = Object.fromEntries([...data.entries()].map(([k, v]) => [k, Number(v)]));
    const response = await fetch(path, {
      method: 'POST', credentials: 'same-origin',
      headers: { 'X-CSRF-Token': csrf, 'Content-Type': 'application/json' },
      body: Object.keys(fields).length ? JSON.stringify(fields) : undefined });
    const body = await response.json();
    document.getElementById('action-result').textContent = response.ok ? body.detail : (body.detail ?? `HTTP ${response.status}`);
    refresh();
  });
}
async function reviewReport(id, status, disable) {
  const response = await fetch(`/console/api/reports/${encodeURIComponent(id)}/status`, {
    method: 'POST', credentials: 'same-origin', headers: { 'X-CSRF-Token': csrf, 'Content-Type': 'application/json' },
    body: JSON.stringify(disable ? { status, disable_scenario: true } : { status }) });
  const body = await response.json();
  document.getElementById('report-result').textContent = response.ok ? `Report ${id}: ${body.detail}` : (body.detail?.message ?? body.detail ?? `HTTP ${response.status}`);
  refreshReports(); refresh();
}
async function refreshReports() {
  const open = [];
  let pending = 0;
  for (const status of ['pending', 'reviewed']) {
    const response = await fetch(`/console/api/reports?status=${status}`, { credentials: 'same-origin' });
    if (!response.ok) return;
    const queue = await response.json();
    pending = queue.pending; open.push(...queue.reports);
  }
  document.getElementById('reports-pending').textContent = `(${pending} pending)`;
  const rows = open.map((r) => {
    const subject = r.call_sid ? `call ${r.call_sid} (${r.subject_scenario ?? '?'})` : r.scenario_id;
    const tr = row([new Date(r.created_at).toLocaleString(), r.reason,
      `${subject}${r.subject_text ? `: ${r.subject_text}` : ''}${r.scenario_disabled_at ? ' [disabled]' : ''}`, r.description, r.status, '']);
    const cell = tr.lastElementChild;
    const actions = [['Reviewed', 'reviewed', false], ['Resolve', 'resolved', false], ['Dismiss', 'dismissed', false]];
    if (r.subject_scenario?.startsWith('custom_') && !r.scenario_disabled_at) actions.splice(2, 0, ['Resolve and disable scenario', 'resolved', true]);
    for (const [label, status, disable] of actions) {
      if (status === r.status) continue;
      const button = document.createElement('button'); button.type = 'button'; button.textContent = label;
      button.addEventListener('click', () => reviewReport(r.id, status, disable));
      cell.append(button, ' ');
    }
    return tr;
  });
  document.getElementById('reports').replaceChildren(...rows);
  if (rows.length === 0) document.getElementById('reports').replaceChildren(row(['No open reports', '', '', '', '', '']));
}
async function refreshOptOuts() {
  const response = await fetch('/console/api/opt-outs', { credentials: 'same-origin' });
  if (!response.ok) return;
  const o = await response.json();
  list('optouts', [['Numbers on the list', o.total], ['Added in 24 h', o.last_day], ['Added in 7 days', o.last_week],
    ['By speech', o.by_speech], ['By key', o.by_key]]);
}
document.getElementById('optout-remove').addEventListener('submit', async (event) => {
  event.preventDefault();
  const input = document.getElementById('optout-number');
  const response = await fetch('/console/api/opt-outs/remove', {
    method: 'POST', credentials: 'same-origin', headers: { 'X-CSRF-Token': csrf, 'Content-Type': 'application/json' },
    body: JSON.stringify({ phone_number: input.value.trim() }) });
  const body = await response.json();
  document.getElementById('optout-result').textContent = response.ok ? `${body.target}: ${body.detail}` : (body.detail?.message ?? body.detail ?? `HTTP ${response.status}`);
  if (response.ok) input.value = '';
  refreshOptOuts(); refresh();
});
document.getElementById('lookup').addEventListener('submit', async (event) => {
  event.preventDefault();
  const kind = document.getElementById('lookup-kind').value;
  const id = encodeURIComponent(document.getElementById('lookup-id').value.trim());
  const response = await fetch(`/console/api/${kind}/${id}`, { credentials: 'same-origin' });
  const body = await response.json();
  const cost = response.ok && kind === 'calls' && body.cost ? `Cost: ${usd(body.cost.usd_micros)} (${body.cost.items.map((i) => `${i.operation} ${i.model} ${usd(i.usd_micros)}`).join(', ') || 'nothing metered'})\n` : '';
  document.getElementById('lookup-result').textContent = response.ok ? cost + JSON.stringify(body, null, 2) : (body.detail ?? `HTTP ${response.status}`);
});
function row(cells, classes = {}) {
  const tr = document.createElement('tr');
  cells.forEach((value, index) => {
    const td = document.createElement('td'); td.textContent = value;
    if (classes[index]) td.className = classes[index];
    tr.append(td);
  });
  return tr;
}

// Calls in progress, pushed by the server (server-sent events); the time on each call counts up every second.
const live = { calls: [], lines: new Map() };
function drawLive() {
  const now = Date.now();
  const body = document.getElementById('live-calls');
  body.replaceChildren(...live.calls.map((call) => {
    const since = call.answered_at ? Math.max(0, Math.round((now - Date.parse(call.answered_at)) / 1000)) : null;
    const line = live.lines.get(call.call_sid);
    const tr = row([call.id, call.phone_number, call.scenario, call.status,
      since == null ? `– / ${call.duration_limit} s` : `${since} / ${call.duration_limit} s`, line ? `${line.speaker}: ${line.text}` : '']);
    tr.dataset.callSid = call.call_sid ?? '';
    return tr;
  }));
  if (live.calls.length === 0) body.replaceChildren(row(['No call in progress', '', '', '', '', '']));
}
// A change in the calls refreshes the figures too, at most every 2 s.
let refreshTimer = null;
function refreshSoon() {
  if (refreshTimer) return;
  refreshTimer = setTimeout(() => { refreshTimer = null; refresh(); }, 2000);
}
function connectLive() {
  const source = new EventSource('/console/api/live');
  const state = document.getElementById('live-state');
  source.addEventListener('open', () => { state.textContent = '(live)'; });
  source.addEventListener('calls', (event) => {
    live.calls = JSON.parse(event.data).calls;
    const current = new Set(live.calls.map((c) => c.call_sid));
    for (const sid of live.lines.keys()) if (!current.has(sid)) live.lines.delete(sid);
    drawLive();
    refreshSoon();
  });
  source.addEventListener('transcript', (event) => {
    const progress = JSON.parse(event.data);
    live.lines.set(progress.call_sid, progress.line);
    drawLive();
  });
  source.addEventListener('error', () => { state.textContent = '(reconnecting…)'; });
}
connectLive();
setInterval(drawLive, 1000);
refresh();
setInterval(refresh, 15000);
refreshReports();
setInterval(refreshReports, 15000);
refreshOptOuts();
setInterval(refreshOptOuts, 15000);
