import Foundation

/// The console's pages: plain HTML and one ES module, no framework and no external resource (it works offline).
enum ConsolePages {
    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;").replacingOccurrences(of: "'", with: "&#39;")
    }

    static let style = """
        <style>
        :root { color-scheme: light dark; --fg: #1b1b1f; --bg: #fafafa; --card: #fff; --muted: #5b5b66; --accent: #1d4ed8; --bad: #b91c1c; }
        @media (prefers-color-scheme: dark) { :root { --fg: #ececf1; --bg: #111114; --card: #1c1c22; --muted: #a8a8b3; --accent: #93b4ff; --bad: #fca5a5; } }
        * { box-sizing: border-box; }
        body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
        header { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; justify-content: space-between; padding: 1rem; border-bottom: 1px solid #8884; }
        main { padding: 1rem; display: grid; gap: 1rem; grid-template-columns: repeat(auto-fit, minmax(18rem, 1fr)); max-width: 80rem; margin: 0 auto; }
        section { background: var(--card); border-radius: .75rem; padding: 1rem; box-shadow: 0 1px 3px #0002; }
        h1 { font-size: 1.25rem; margin: 0; } h2 { font-size: 1rem; margin: 0 0 .5rem; }
        dl { display: grid; grid-template-columns: 1fr auto; gap: .25rem 1rem; margin: 0; } dd { margin: 0; font-variant-numeric: tabular-nums; font-weight: 600; }
        .muted { color: var(--muted); } .bad { color: var(--bad); }
        label { display: block; margin: .5rem 0 .25rem; }
        input, select { font: inherit; padding: .5rem; width: 100%; border-radius: .5rem; border: 1px solid #8888; background: var(--bg); color: var(--fg); }
        button { font: inherit; padding: .5rem 1rem; border-radius: .5rem; border: 0; background: var(--accent); color: #fff; cursor: pointer; margin-top: .75rem; }
        button:focus-visible, input:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
        svg { width: 100%; height: auto; } .bar { fill: var(--accent); } .axis { stroke: var(--muted); stroke-width: 1; }
        ul { padding-left: 1.25rem; margin: 0; }
        form.inline { display: inline; }
        </style>
        """

    static func page(title: String, body: String, head: String = "") -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title)) · Chorus console</title>
        \(head)
        \(style)
        </head>
        <body>
        \(body)
        </body>
        </html>
        """
    }

    static func login(csrfToken: String, message: String?) -> String {
        page(
            title: "Sign in",
            body: """
                <main style="max-width: 26rem">
                <section>
                <h1>Chorus console</h1>
                <p class="muted">Administrators only.</p>
                \(message.map { "<p class=\"bad\" role=\"alert\">\(escape($0))</p>" } ?? "")
                <form method="post" action="/console/login">
                <input type="hidden" name="csrf_token" value="\(escape(csrfToken))">
                <label for="email">Email</label>
                <input id="email" name="email" type="email" autocomplete="username" required>
                <label for="password">Password</label>
                <input id="password" name="password" type="password" autocomplete="current-password" required>
                <button type="submit">Sign in</button>
                </form>
                </section>
                </main>
                """)
    }

    static func message(_ text: String) -> String {
        page(
            title: "Console",
            body: """
                <main style="max-width: 26rem"><section><h1>Chorus console</h1><p role="alert">\(escape(text))</p>
                <p><a href="/console/login">Sign in</a></p></section></main>
                """)
    }

    static func overview(email: String, csrfToken: String) -> String {
        page(
            title: "Overview",
            body: """
                <header>
                <h1>Chorus console</h1>
                <div><span class="muted">\(escape(email))</span>
                <form class="inline" method="post" action="/console/logout"><input type="hidden" name="csrf_token" value="\(escape(csrfToken))">
                <button type="submit">Sign out</button></form></div>
                </header>
                <main>
                <section aria-labelledby="calls-h"><h2 id="calls-h">Calls</h2><dl id="calls"></dl>
                <h2>Calls per hour (last 24 h)</h2><div id="calls-chart" role="img" aria-label="Calls per hour over the last 24 hours"></div></section>
                <section aria-labelledby="reasons-h"><h2 id="reasons-h">Ended reasons today</h2><dl id="reasons"></dl></section>
                <section aria-labelledby="users-h"><h2 id="users-h">Users</h2><dl id="users"></dl></section>
                <section aria-labelledby="spend-h"><h2 id="spend-h">Provider spend</h2><dl id="spend"></dl>
                <h2>Spend per day (last 14 days, USD)</h2><div id="spend-chart" role="img" aria-label="Provider spend per day over the last 14 days"></div></section>
                <section aria-labelledby="jobs-h"><h2 id="jobs-h">Jobs</h2><dl id="jobs"></dl></section>
                <section aria-labelledby="appstore-h"><h2 id="appstore-h">App Store notifications</h2><dl id="appstore"></dl></section>
                <section aria-labelledby="actions-h"><h2 id="actions-h">Actions</h2>
                <form class="action" data-path="/console/api/users/{id}/revoke-sessions"><label for="revoke-user">Sign a user out everywhere: user id</label>
                <input id="revoke-user" name="id" required><button type="submit">Revoke sessions</button></form>
                <form class="action" data-path="/console/api/users/{id}/grant-calls"><label for="grant-user">Grant calls: user id</label>
                <input id="grant-user" name="id" required><label for="grant-calls">Calls</label><input id="grant-calls" name="calls" type="number" min="1" max="100" value="1" required>
                <label for="grant-days">Valid for days</label><input id="grant-days" name="days" type="number" min="1" max="365" value="30" required>
                <button type="submit">Grant calls</button></form>
                <form class="action" data-path="/console/api/calls/{id}/refund"><label for="refund-call">Refund a call: call id</label>
                <input id="refund-call" name="id" type="number" min="1" required><button type="submit">Refund</button></form>
                <form class="action" data-path="/console/api/jobs/{id}/rerun"><label for="rerun-job">Run a failed job again: job id</label>
                <input id="rerun-job" name="id" type="number" min="1" required><button type="submit">Run again</button></form>
                <p id="action-result" role="status"></p></section>
                <section aria-labelledby="look-h"><h2 id="look-h">Look up</h2>
                <form id="lookup"><label for="lookup-kind">What</label>
                <select id="lookup-kind" name="kind"><option value="users">User</option><option value="calls">Call</option><option value="stories">Story</option></select>
                <label for="lookup-id">Id</label><input id="lookup-id" name="id" required><button type="submit">Show</button></form>
                <pre id="lookup-result" role="status" style="white-space: pre-wrap; overflow-wrap: anywhere"></pre></section>
                <section aria-labelledby="audit-h"><h2 id="audit-h">Audit log</h2><ul id="audit"></ul></section>
                </main>
                """,
            head: """
                <meta name="csrf-token" content="\(escape(csrfToken))">
                <script type="module" src="/console/console.js"></script>
                """)
    }

    /// The overview's module: fetches the figures every 5 s, draws the charts as SVG, runs the actions with the CSRF
    /// token.
    static let script = """
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
        document.getElementById('lookup').addEventListener('submit', async (event) => {
          event.preventDefault();
          const kind = document.getElementById('lookup-kind').value;
          const id = encodeURIComponent(document.getElementById('lookup-id').value.trim());
          const response = await fetch(`/console/api/${kind}/${id}`, { credentials: 'same-origin' });
          const body = await response.json();
          document.getElementById('lookup-result').textContent = response.ok ? JSON.stringify(body, null, 2) : (body.detail ?? `HTTP ${response.status}`);
        });
        refresh();
        setInterval(refresh, 5000);
        """
}
