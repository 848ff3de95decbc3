import ChorusCore
import Foundation

/// The console's pages: plain HTML with the shared stylesheet and the console's ES module (`/assets/console.js`), no
/// framework and no external resource (it works offline).
enum ConsolePages {
    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;").replacingOccurrences(of: "'", with: "&#39;")
    }

    static func page(title: String, body: String, head: String = "", product: String = "console") -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title)) · Chorus \(product)</title>
        <link rel="icon" href="/favicon.svg" type="image/svg+xml">
        <link rel="stylesheet" href="/assets/chorus.css">
        \(head)
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
                <main class="narrow">
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
                <main class="narrow"><section><h1>Chorus console</h1><p role="alert">\(escape(text))</p>
                <p><a href="/console/login">Sign in</a></p></section></main>
                """)
    }

    /// The "Model lifecycle" panel: what the last check of OpenAI's model list found for the configured models.
    static func modelLifecycle(_ report: ModelLifecycleWatch.Report?, models: Int) -> String {
        let heading = #"<h2 id="models-h">Model lifecycle <span class="muted">(OpenAI's model list, this instance)</span></h2>"#
        guard let report else {
            return #"<section class="wide" id="model-lifecycle" aria-labelledby="models-h">\#(heading)<p class="muted">Not checked yet.</p></section>"#
        }
        let checked = escape(ISO8601DateFormatter().string(from: report.checkedAt))
        if let failure = report.failure {
            return """
                <section class="wide" id="model-lifecycle" aria-labelledby="models-h">\(heading)
                <p class="warn" role="status">The check at \(checked) could not read the model list; it runs again at the next interval: \(escape(String(failure.prefix(300))))</p></section>
                """
        }
        let attention = report.findings.filter(\.needsAttention)
        let items = attention.map { finding in
            "<li class=\"\(finding.isUnusable ? "bad" : "warn")\">\(escape(finding.summary))</li>"
        }
        let dated = report.findings.filter { !$0.needsAttention && $0.shutdownDate != nil }.map { "<li>\(escape($0.summary))</li>" }
        let verdict =
            attention.isEmpty
            ? #"<p class="good">All \#(models) configured models are offered; none shuts down within \#(ModelLifecyclePolicy.warningDays) days.</p>"#
            : #"<ul role="alert">\#(items.joined())</ul>"#
        return """
            <section class="wide" id="model-lifecycle" aria-labelledby="models-h">\(heading)
            \(verdict)\(dated.isEmpty ? "" : "<ul class=\"muted\">\(dated.joined())</ul>")
            <p class="muted">Checked \(checked).</p></section>
            """
    }

    static func overview(email: String, csrfToken: String, modelLifecycle: String) -> String {
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
                \(modelLifecycle)
                <section class="wide" aria-labelledby="look-h"><h2 id="look-h">Look up</h2>
                <form id="lookup" class="row lookup" role="search"><label for="lookup-q" class="visually-hidden">Email, phone number, call SID, call id, user or story id</label>
                <input id="lookup-q" name="q" required autocomplete="off" spellcheck="false" placeholder="Email, phone number (+14155550123), call SID (CA…), call id, user or story id">
                <button type="submit">Look up</button></form>
                <p id="lookup-error" class="bad" role="alert"></p>
                <div id="lookup-matches"></div>
                <div id="detail" aria-live="polite"></div></section>
                <section class="wide" aria-labelledby="live-h"><h2 id="live-h">Calls in progress <span id="live-state" class="muted">(connecting…)</span></h2>
                <table><caption class="visually-hidden">Calls in progress, updated live</caption>
                <thead><tr><th scope="col">Call</th><th scope="col">Number</th><th scope="col">Scenario</th><th scope="col">Status</th><th scope="col">Time / limit</th><th scope="col">Last line</th></tr></thead>
                <tbody id="live-calls"></tbody></table></section>
                <section aria-labelledby="calls-h"><h2 id="calls-h">Calls</h2><dl id="calls"></dl>
                <h2>Calls per hour (last 24 h)</h2><div id="calls-chart" role="img" aria-label="Calls per hour over the last 24 hours"></div></section>
                <section aria-labelledby="reasons-h"><h2 id="reasons-h">Ended reasons today</h2><dl id="reasons"></dl></section>
                <section aria-labelledby="users-h"><h2 id="users-h">Users</h2><dl id="users"></dl></section>
                <section aria-labelledby="spend-h"><h2 id="spend-h">Provider spend</h2><dl id="spend"></dl>
                <h2>Spend per day (last 14 days, USD)</h2><div id="spend-chart" role="img" aria-label="Provider spend per day over the last 14 days"></div></section>
                <section class="wide" aria-labelledby="providers-h"><h2 id="providers-h">Provider health <span class="muted">(last 15 min, this instance)</span></h2>
                <table><thead><tr><th scope="col">Provider</th><th scope="col">Operation</th><th scope="col">Status</th><th scope="col">Calls</th><th scope="col">Error rate</th><th scope="col">p50 / p95</th><th scope="col">Last failure</th></tr></thead>
                <tbody id="providers"></tbody></table></section>
                <section aria-labelledby="jobs-h"><h2 id="jobs-h">Jobs</h2><dl id="jobs"></dl>
                <form id="rerun-job-form"><label for="rerun-job">Run a failed job again: job id</label>
                <input id="rerun-job" name="id" type="number" min="1" required><button type="submit">Run again</button></form>
                <p id="rerun-result" role="status"></p></section>
                <section aria-labelledby="appstore-h"><h2 id="appstore-h">App Store notifications</h2><dl id="appstore"></dl></section>
                <section class="wide" aria-labelledby="reports-h"><h2 id="reports-h">Content reports <span id="reports-pending" class="muted"></span></h2>
                <table><caption class="visually-hidden">Open content reports, oldest first</caption>
                <thead><tr><th scope="col">Filed</th><th scope="col">Reason</th><th scope="col">Subject</th><th scope="col">Description</th><th scope="col">Status</th><th scope="col">Review</th></tr></thead>
                <tbody id="reports"></tbody></table><p id="report-result" role="status"></p></section>
                <section aria-labelledby="optouts-h"><h2 id="optouts-h">Do-not-call list</h2><dl id="optouts"></dl>
                <form id="optout-remove"><label for="optout-number">Remove a number on its owner's request (E.164)</label>
                <input id="optout-number" name="phone_number" required placeholder="+14155550123" autocomplete="off">
                <button type="submit">Remove from the list</button></form><p id="optout-result" role="status"></p></section>
                <section aria-labelledby="audit-h"><h2 id="audit-h">Audit log</h2><ul id="audit"></ul></section>
                </main>
                """,
            head: """
                <meta name="csrf-token" content="\(escape(csrfToken))">
                <script type="module" src="/assets/console.js"></script>
                """)
    }
}
