import Foundation

/// The playground's page: plain HTML, the shared stylesheet and the playground's ES module.
enum PlaygroundPages {
    /// `sandbox`: the sandbox App Store is mounted; `sandboxTelephony`: calls go to the Twilio emulator (their
    /// recording can be played afterwards); `providers`: role → provider as `/health` reports them, for the signed-out
    /// page's note on what is real.
    static func page(sandbox: Bool, sandboxTelephony: Bool, providers: [String: String]) -> String {
        ConsolePages.page(
            title: "Playground",
            body: """
                <header>
                <h1>Chorus playground</h1>
                <div class="row" id="who" hidden><span id="who-email" class="muted"></span>
                <button type="button" id="sign-out" class="secondary">Sign out</button></div>
                </header>
                <p id="notice" role="status" aria-live="polite" class="visually-hidden"></p>
                <main class="welcome" id="signed-out">
                <section aria-labelledby="intro-h" id="intro">
                <h2 id="intro-h">What Chorus is</h2>
                <p>Chorus is the server behind three voice-AI iPhone apps. This page tries all three in the browser, through \
                the same API the apps use:</p>
                <ul class="products">
                <li><strong>AI phone calls</strong>: pick a persona and Chorus calls a phone number; watch the transcript live.</li>
                <li><strong>Family voice messages</strong>: record, send, and hear them in the sender's voice or as a spoken summary.</li>
                <li><strong>Bedtime stories</strong>: narrated and illustrated, starring a hero you create.</li>
                </ul>
                \(HomeController.sandboxNote(providers: providers, id: "sandbox-intro"))
                <p class="muted">Create an account with any email address: nothing is sent to it.</p>
                </section>
                <section aria-labelledby="auth-h">
                <h2 id="auth-h">Sign in or create an account</h2>
                <form id="auth-form">
                <label for="auth-email">Email</label>
                <input id="auth-email" name="email" type="email" autocomplete="username" required>
                <label for="auth-password">Password (at least 8 characters)</label>
                <input id="auth-password" name="password" type="password" autocomplete="current-password" minlength="8" required>
                <div class="row"><button type="submit" id="sign-in" name="action" value="login">Sign in</button>
                <button type="submit" id="sign-up" name="action" value="register" class="secondary">Create account</button></div>
                <p id="auth-error" class="bad" role="alert"></p>
                </form>
                </section>
                </main>
                <main id="signed-in" hidden>
                <section aria-labelledby="account-h">
                <h2 id="account-h">Usage and plan</h2>
                <dl id="usage"></dl>
                <h3>Plans</h3>
                <ul id="plans" class="plans"></ul>
                <p id="purchase-result" role="status" aria-live="polite"></p>
                </section>
                <section aria-labelledby="call-h">
                <h2 id="call-h">Place a call</h2>
                <form id="call-form">
                <label for="call-number">Phone number (E.164)</label>
                <input id="call-number" name="phone_number" type="tel" value="+15555550123" pattern="\\+[1-9][0-9]{7,14}" required>
                <label for="call-scenario">Scenario</label>
                <select id="call-scenario" name="scenario"></select>
                <p id="scenario-description" class="muted"></p>
                <button type="submit" id="place-call">Call</button>
                <button type="button" id="report-scenario">Report this scenario</button>
                </form>
                <details>
                <summary>Your own scenario and voice</summary>
                <form id="custom-form">
                <label for="custom-name">Name</label><input id="custom-name" name="name" maxlength="60" required>
                <label for="custom-persona">Who the AI plays (20 characters or more)</label>
                <textarea id="custom-persona" name="persona" rows="3" minlength="20" maxlength="2000" required></textarea>
                <label for="custom-voice">Voice</label>
                <div class="row"><select id="custom-voice" name="voice" aria-describedby="custom-voice-description"></select>
                <button type="button" id="preview-voice" class="secondary" aria-label="Preview this voice">▶ Preview</button></div>
                <p id="custom-voice-description" class="muted"></p>
                <p id="preview-status" class="muted" role="status"></p><audio id="voice-preview-audio" preload="none" hidden></audio>
                <button type="submit">Save scenario</button>
                </form>
                </details>
                <p id="call-error" class="bad" role="alert"></p>
                <div id="call-live" hidden>
                <h3>Call <span id="call-sid" class="muted"></span></h3>
                <p>Status: <span id="call-status" class="status-pill">placing</span> <span id="call-reason" class="muted"></span></p>
                <label for="call-progress">Time used of the limit: <span id="call-time">0 / 0 s</span></label>
                <progress id="call-progress" max="60" value="0"></progress>
                <h3 id="transcript-h">Transcript</h3>
                <ol id="call-transcript" class="transcript" aria-labelledby="transcript-h" aria-live="polite"></ol>
                <div id="call-recording" hidden><h3>Recording</h3><audio id="call-audio" controls preload="none"></audio></div>
                <button type="button" id="report-call">Report this call</button>
                </div>
                <form id="report-form" hidden>
                <h3>Report <span id="report-subject" class="muted"></span></h3>
                <label for="report-reason">Reason</label>
                <select id="report-reason" name="reason"><option value="inappropriate">Inappropriate Content</option>
                <option value="offensive">Offensive Language</option><option value="spam">Spam or Misleading</option><option value="other">Other</option></select>
                <label for="report-description">Describe the issue</label>
                <textarea id="report-description" name="description" rows="3" maxlength="1000" required></textarea>
                <button type="submit" id="report-submit">Submit report</button>
                </form>
                <p id="report-result" role="status" aria-live="polite"></p>
                </section>
                <section aria-labelledby="messages-h">
                <h2 id="messages-h">Voice messages</h2>
                <form id="conversation-form">
                <label for="conversation-email">Start a conversation with (their email: they join when they accept)</label>
                <input id="conversation-email" name="email" type="email" required>
                <button type="submit">Start</button>
                </form>
                <div id="invitations-box" hidden>
                <h3 id="invitations-h">Invitations</h3>
                <ul id="invitations" class="transcript" aria-labelledby="invitations-h"></ul>
                </div>
                <label for="conversation">Conversation</label>
                <select id="conversation" aria-describedby="no-conversation"></select>
                <p id="no-conversation" class="muted" hidden>No conversation yet: start one above with someone's email, or accept their \
                invitation. Messages are recorded with the microphone (the sandbox transcribes them) and heard in the sender's voice.</p>
                <div class="row">
                <button type="button" id="record" aria-pressed="false">Record</button>
                <button type="button" id="summary" class="secondary">Hear a summary</button>
                </div>
                <div id="review" hidden>
                <h3>Review</h3>
                <audio id="review-audio" controls></audio>
                <label for="review-transcript">Transcript</label>
                <textarea id="review-transcript" rows="3" readonly></textarea>
                <div class="row"><button type="button" id="send-voice">Send</button><button type="button" id="discard-voice" class="secondary">Discard</button></div>
                </div>
                <p id="messages-status" role="status" aria-live="polite"></p>
                <div id="summary-result" hidden><p id="summary-text"></p><audio id="summary-audio" controls></audio></div>
                <ul id="messages" class="transcript"></ul>
                </section>
                <section aria-labelledby="stories-h" class="wide">
                <h2 id="stories-h">Stories</h2>
                <div class="stories">
                <form id="hero-form">
                <label for="hero-name">Hero's name</label><input id="hero-name" name="name" maxlength="40" required>
                <label for="hero-traits">Traits (comma-separated)</label><input id="hero-traits" name="traits" value="brave, kind" required>
                <label for="hero-appearance">Appearance</label><input id="hero-appearance" name="appearance" value="curly red hair and green eyes" required>
                <label for="hero-avatar">Avatar</label>
                <select id="hero-avatar" name="avatar_quality"><option value="">No picture</option><option value="standard">Standard</option>
                <option value="hd">HD (about four times the cost)</option></select>
                <button type="submit">Create hero</button>
                <img id="hero-avatar-out" class="avatar" alt="" width="160" height="160" hidden>
                </form>
                <form id="story-form">
                <div class="fields">
                <div><label for="story-hero">Hero</label><select id="story-hero" name="hero_id" required aria-describedby="no-hero"></select>
                <p id="no-hero" class="muted" hidden>No hero yet: create one first.</p></div>
                <div><label for="story-event">Event</label><select id="story-event" name="event_id"></select></div>
                <div><label for="story-language">Language</label>
                <select id="story-language" name="language"><option value="en">English</option><option value="es">Español</option>
                <option value="fr">Français</option><option value="de">Deutsch</option><option value="it">Italiano</option></select></div>
                <div><label for="story-voice">Narrator</label><select id="story-voice" name="voice" aria-describedby="story-voice-description"></select>
                <p id="story-voice-description" class="muted"></p></div>
                <div><label for="story-length">Length (minutes)</label><input id="story-length" name="length_minutes" type="number" min="1" max="15" value="3" required></div>
                <div><label for="story-pictures">Illustrations</label><input id="story-pictures" name="illustration_count" type="number" min="0" max="8" value="2" required></div>
                </div>
                <button type="submit" id="make-story">Make the story</button>
                </form>
                </div>
                <p id="story-status" role="status" aria-live="polite"></p>
                <div id="story" hidden>
                <h3 id="story-title"></h3>
                <div id="story-text" class="story-text" tabindex="0" aria-label="Story text"></div>
                <h3>Narration</h3><div id="story-audio"></div>
                <h3>Illustrations</h3><div id="story-pictures-out" class="pictures"></div>
                </div>
                </section>
                </main>
                """,
            head: """
                <meta name="chorus-sandbox" content="\(sandbox)">
                <meta name="chorus-sandbox-telephony" content="\(sandboxTelephony)">
                <script type="module" src="/assets/playground.js"></script>
                """,
            product: "playground")
    }
}
