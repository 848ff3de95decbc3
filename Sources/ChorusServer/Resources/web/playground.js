// The Chorus playground: the public API as the apps use it, from a browser. No framework, no build step.
// Tokens live in this tab's sessionStorage; every request carries `Authorization: Bearer`, and a 401 is retried
// once after refreshing the tokens.

const sandbox = document.querySelector('meta[name="chorus-sandbox"]').content === 'true';
const sandboxTelephony = document.querySelector('meta[name="chorus-sandbox-telephony"]').content === 'true';
const $ = (id) => document.getElementById(id);

// MARK: - API

let tokens = JSON.parse(sessionStorage.getItem('chorus.tokens') ?? 'null');

function saveTokens(value) {
  tokens = value;
  if (value) sessionStorage.setItem('chorus.tokens', JSON.stringify(value));
  else sessionStorage.removeItem('chorus.tokens');
}

function userID() {
  if (!tokens) return null;
  const part = tokens.access_token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
  return JSON.parse(atob(part + '='.repeat((4 - (part.length % 4)) % 4))).sub;
}

class APIError extends Error {
  constructor(status, body) {
    const fields = (body?.errors ?? []).map((e) => `${e.field}: ${e.message}`).join('; ');
    super(fields || body?.detail?.message || body?.detail || `HTTP ${status}`);
    this.status = status;
  }
}

async function refreshTokens() {
  const response = await fetch('/auth/refresh', {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ refresh_token: tokens?.refresh_token }) });
  if (!response.ok) { saveTokens(null); show(); throw new APIError(401, { detail: 'Your session ended. Please sign in again.' }); }
  saveTokens(await response.json());
}

async function raw(method, path, { body, contentType = 'application/json', accept = 'application/json', signal, retried = false } = {}) {
  const headers = { Accept: accept };
  if (tokens) headers.Authorization = `Bearer ${tokens.access_token}`;
  if (body !== undefined) headers['Content-Type'] = contentType;
  const payload = body === undefined ? undefined : (contentType === 'application/json' ? JSON.stringify(body) : body);
  const response = await fetch(path, { method, headers, body: payload, signal });
  if (response.status === 401 && tokens && !retried && !path.startsWith('/auth/')) {
    await refreshTokens();
    return raw(method, path, { body, contentType, accept, signal, retried: true });
  }
  if (!response.ok) {
    let detail = null;
    try { detail = await response.json(); } catch { /* not JSON */ }
    throw new APIError(response.status, detail);
  }
  return response;
}

async function api(method, path, body) {
  const response = await raw(method, path, { body });
  return response.status === 204 ? null : response.json();
}

/** Server-sent events of `path`, read with fetch (EventSource cannot send the bearer token). */
async function* events(path, signal) {
  const response = await raw('GET', path, { accept: 'text/event-stream', signal });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (block.startsWith(':')) continue;
      let name = 'message';
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) name = line.slice(7);
        else if (line.startsWith('data: ')) data += line.slice(6);
      }
      yield { name, data: JSON.parse(data) };
    }
  }
}

function announce(text) { $('notice').textContent = text; }

function fail(target, error) {
  $(target).textContent = error instanceof APIError || error instanceof Error ? error.message : String(error);
}

function option(value, label) {
  const element = document.createElement('option');
  element.value = value;
  element.textContent = label;
  return element;
}

function rows(target, pairs) {
  $(target).replaceChildren(...pairs.flatMap(([name, value]) => {
    const dt = document.createElement('dt'); dt.textContent = name;
    const dd = document.createElement('dd'); dd.textContent = value; dd.dataset.name = name;
    return [dt, dd];
  }));
}

// MARK: - Signing in

function show() {
  const signedIn = Boolean(tokens);
  $('signed-out').hidden = signedIn;
  $('signed-in').hidden = !signedIn;
  $('who').hidden = !signedIn;
  if (signedIn) {
    $('who-email').textContent = sessionStorage.getItem('chorus.email') ?? '';
    loadAccount();
    loadCatalog();
    loadConversations();
    loadStories();
  }
}

$('auth-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const action = event.submitter?.value === 'register' ? 'register' : 'login';
  const email = $('auth-email').value.trim();
  const password = $('auth-password').value;
  $('auth-error').textContent = '';
  try {
    const response = action === 'register'
      ? await fetch('/auth/register', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email, password }) })
      : await fetch('/auth/login', { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ username: email, password }) });
    const body = await response.json();
    if (!response.ok) throw new APIError(response.status, body);
    saveTokens(body);
    sessionStorage.setItem('chorus.email', email);
    announce(action === 'register' ? 'Account created, you are signed in.' : 'Signed in.');
    show();
  } catch (error) { fail('auth-error', error); }
});

$('sign-out').addEventListener('click', async () => {
  try { await api('POST', '/auth/logout', { refresh_token: tokens?.refresh_token }); } catch { /* signed out anyway */ }
  saveTokens(null);
  if (socket) { const closing = socket; socket = null; closing.close(); }
  sessionStorage.removeItem('chorus.email');
  announce('Signed out.');
  show();
});

// MARK: - Usage and plan

async function loadAccount() {
  try {
    const [usage, status, pricing] = await Promise.all([
      api('GET', '/mobile/usage-stats'), api('GET', '/mobile/subscription-status'), api('GET', '/mobile/pricing')]);
    rows('usage', [
      ['Plan', usage.subscription_tier ? planName(usage.subscription_tier) : (usage.is_trial_active ? 'Free trial' : 'None')],
      ['Trial calls left', usage.trial_calls_remaining],
      ['Calls this week', usage.calls_made_this_week],
      ['Calls this month', usage.calls_made_this_month],
      ['Add-on calls left', usage.addon_calls_remaining],
      ['Renews', status.will_renew == null ? '–' : (status.will_renew ? `yes, ${new Date(status.next_payment_date).toLocaleDateString()}` : 'no')],
    ]);
    const items = [...pricing.plans.map((plan) => ({ ...plan, kind: 'auto_renewable', period: plan.billing === 'weekly' ? 7 * 86400 : 30 * 86400 })),
      { ...pricing.addon, billing: pricing.addon.expires, kind: 'consumable' }];
    $('plans').replaceChildren(...items.map((item) => {
      const li = document.createElement('li');
      const text = document.createElement('span');
      text.textContent = `${item.name}: ${item.price} (${item.billing}) · ${item.calls}`;
      li.append(text);
      if (sandbox) {
        const button = document.createElement('button');
        button.type = 'button';
        button.className = 'secondary';
        button.textContent = `Buy ${item.name}`;
        button.dataset.product = item.product_id;
        button.addEventListener('click', () => buy(item, button));
        li.append(button);
      }
      return li;
    }));
    if (!sandbox) $('purchase-result').textContent = 'Purchases happen in the iOS app.';
  } catch (error) { fail('purchase-result', error); }
}

/** `mobile_premium` → `Premium`. */
function planName(tier) {
  const name = tier.replace(/^(mobile|web)_/, '');
  return name.charAt(0).toUpperCase() + name.slice(1);
}

/** Buys through the sandbox App Store: it signs a transaction for this account, which the server then verifies. */
async function buy(item, button) {
  button.disabled = true;
  $('purchase-result').textContent = `Buying ${item.name}…`;
  try {
    const transaction = await api('POST', '/sandbox/app-store/purchases', {
      product_id: item.product_id, kind: item.kind, period_seconds: item.period, app_account_token: userID() });
    const result = await api('POST', '/mobile/purchase-subscription', {
      product_id: item.product_id, signed_transaction: transaction.signed_transaction });
    $('purchase-result').textContent = result.message;
    await loadAccount();
  } catch (error) { fail('purchase-result', error); }
  button.disabled = false;
}

// MARK: - Calls

let scenarios = [];
let callVoices = [];

async function loadCatalog() {
  try {
    const [builtIn, custom, voices] = await Promise.all([
      api('GET', '/mobile/scenarios'), api('GET', '/mobile/custom-scenarios'), api('GET', '/mobile/voices')]);
    scenarios = [...builtIn.scenarios, ...custom.custom_scenarios.map((s) => ({ ...s, description: s.persona, custom: true }))];
    $('call-scenario').replaceChildren(...scenarios.map((s) => option(s.id, s.custom ? `${s.name} (yours, ${s.voice})` : `${s.name} (${s.voice})`)));
    // The option says the voice's name only (a select cannot wrap: a long option is cut off); its description
    // shows under the list.
    callVoices = voices.voices;
    $('custom-voice').replaceChildren(...callVoices.map((v) => option(v.id, v.display_name)));
    describeScenario();
    describeCallVoice();
  } catch (error) { fail('call-error', error); }
}

function describeScenario() {
  const scenario = scenarios.find((s) => s.id === $('call-scenario').value);
  $('scenario-description').textContent = scenario?.description ?? '';
}
$('call-scenario').addEventListener('change', describeScenario);

function describeCallVoice() {
  $('custom-voice-description').textContent = callVoices.find((v) => v.id === $('custom-voice').value)?.personality ?? '';
}
$('custom-voice').addEventListener('change', describeCallVoice);

// Hearing a voice before choosing it: the server's sample, streamed by the audio element (no token needed).
$('preview-voice').addEventListener('click', async () => {
  const voice = callVoices.find((v) => v.id === $('custom-voice').value);
  if (!voice) return;
  const audio = $('voice-preview-audio');
  const path = `/mobile/voices/${encodeURIComponent(voice.id)}/preview`;
  $('preview-status').textContent = `Loading ${voice.display_name}…`;
  $('preview-voice').disabled = true;
  audio.pause();
  audio.src = path;
  try {
    await audio.play();
    $('preview-status').textContent = `Playing ${voice.display_name}.`;
  } catch (error) {
    // The element does not say why; the server's answer does.
    try { await raw('GET', path, { accept: 'audio/*' }); fail('preview-status', error); } catch (refused) { fail('preview-status', refused); }
  }
  $('preview-voice').disabled = false;
});
$('voice-preview-audio').addEventListener('ended', () => { $('preview-status').textContent = ''; });

$('custom-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  $('call-error').textContent = '';
  try {
    const created = await api('POST', '/mobile/custom-scenarios', {
      name: $('custom-name').value, persona: $('custom-persona').value, voice: $('custom-voice').value });
    await loadCatalog();
    $('call-scenario').value = created.id;
    describeScenario();
    announce(`Scenario ${created.name} saved.`);
  } catch (error) { fail('call-error', error); }
});

let watching = null;

$('call-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  $('call-error').textContent = '';
  $('place-call').disabled = true;
  try {
    const placed = await api('POST', '/mobile/make-call', { phone_number: $('call-number').value.trim(), scenario: $('call-scenario').value });
    watchCall(placed.call_sid, placed.duration_limit);
    loadAccount();
  } catch (error) { fail('call-error', error); }
  $('place-call').disabled = false;
});

// Content reports (seed 000 "Reporting and Moderation System"): the selected scenario or the call shown.
const report = { scenario_id: null, call_sid: null };
function openReport(subject) {
  report.scenario_id = subject.scenario ?? null;
  report.call_sid = subject.call ?? null;
  $('report-subject').textContent = subject.call ? `call ${subject.call}` : `scenario ${subject.scenario}`;
  $('report-result').textContent = '';
  $('report-form').hidden = false;
  $('report-description').focus();
}
$('report-scenario').addEventListener('click', () => openReport({ scenario: $('call-scenario').value }));
$('report-call').addEventListener('click', () => openReport({ call: $('call-sid').textContent }));
$('report-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  try {
    const filed = await api('POST', '/mobile/reports', {
      ...(report.call_sid ? { call_sid: report.call_sid } : { scenario_id: report.scenario_id }),
      reason: $('report-reason').value, description: $('report-description').value });
    $('report-form').hidden = true;
    $('report-description').value = '';
    $('report-result').textContent = `Thank you: report ${filed.id} is ${filed.status}.`;
  } catch (error) { fail('report-result', error); }
});

/** Follows a call live: status, the transcript as it is spoken, the time counting toward the limit. */
async function watchCall(sid, limit) {
  watching?.abort();
  const controller = new AbortController();
  watching = controller;
  const state = { answeredAt: null, endedAt: null, limit, lines: [] };
  $('call-live').hidden = false;
  $('call-recording').hidden = true;
  $('call-sid').textContent = sid;
  $('call-status').textContent = 'queued';
  $('call-reason').textContent = '';
  $('call-transcript').replaceChildren();
  $('call-progress').max = limit;
  const tick = setInterval(() => drawTime(state), 250);
  try {
    for await (const event of events(`/mobile/calls/${encodeURIComponent(sid)}/events`, controller.signal)) {
      const progress = event.data;
      if (progress.detail) applyDetail(state, progress.detail);
      if (progress.call) {
        $('call-status').textContent = progress.call.status;
        $('call-reason').textContent = progress.call.ended_reason ? `(${progress.call.ended_reason.replace(/_/g, ' ')})` : '';
        state.answeredAt = progress.answered_at ? Date.parse(progress.answered_at) : state.answeredAt;
        state.endedAt = progress.ended_at ? Date.parse(progress.ended_at) : state.endedAt;
      }
      if (progress.line) addLine(state, progress.line);
      if (event.name === 'done') break;
    }
    announce('The call has ended.');
    if (sandboxTelephony) {
      $('call-audio').src = `/sandbox/calls/${encodeURIComponent(sid)}/recording.wav`;
      $('call-recording').hidden = false;
    }
    loadAccount();
  } catch (error) {
    if (error.name !== 'AbortError') fail('call-error', error);
  } finally {
    clearInterval(tick);
    drawTime(state);
  }
}

function applyDetail(state, detail) {
  $('call-status').textContent = detail.status;
  $('call-reason').textContent = detail.ended_reason ? `(${detail.ended_reason.replace(/_/g, ' ')})` : '';
  state.answeredAt = detail.answered_at ? Date.parse(detail.answered_at) : null;
  state.endedAt = detail.ended_at ? Date.parse(detail.ended_at) : null;
  state.duration = detail.duration_seconds;
  if (detail.transcript) {
    state.lines = [];
    $('call-transcript').replaceChildren();
    for (const line of detail.transcript) addLine(state, line);
  }
}

function addLine(state, line) {
  if (state.lines.some((l) => l.speaker === line.speaker && l.text === line.text && l.at_ms === line.at_ms)) return;
  state.lines.push(line);
  state.lines.sort((a, b) => a.at_ms - b.at_ms);
  $('call-transcript').replaceChildren(...state.lines.map((l) => {
    const li = document.createElement('li');
    li.className = l.speaker;
    const who = document.createElement('span');
    who.className = 'who';
    who.textContent = `${l.speaker === 'assistant' ? 'AI' : 'Callee'} · ${(l.at_ms / 1000).toFixed(1)} s${l.interrupted ? ' · interrupted' : ''}`;
    li.append(who, l.text);
    return li;
  }));
  $('call-transcript').lastElementChild?.scrollIntoView({ block: 'nearest' });
}

function drawTime(state) {
  let seconds = 0;
  if (state.duration != null) seconds = state.duration;
  else if (state.answeredAt) seconds = Math.max(0, ((state.endedAt ?? Date.now()) - state.answeredAt) / 1000);
  seconds = Math.min(seconds, state.limit);
  $('call-progress').value = seconds;
  $('call-time').textContent = `${Math.floor(seconds)} / ${state.limit} s`;
}

// MARK: - Voice messages

let conversations = [];
let socket = null;

async function loadConversations(select) {
  try {
    conversations = (await api('GET', '/conversations')).conversations;
    const me = userID();
    $('conversation').replaceChildren(...conversations.map((c) => option(c.id,
      c.title ?? c.members.filter((m) => m.user_id !== me).map((m) => m.display_name).join(', '))));
    if (select) $('conversation').value = select;
    $('no-conversation').hidden = conversations.length > 0;
    await loadMessages();
    await loadInvitations();
    listen();
  } catch (error) { fail('messages-status', error); }
}

/** Invitations waiting for this account: accept, decline, or block whoever sent them. */
async function loadInvitations() {
  const { invitations } = await api('GET', '/invitations');
  $('invitations-box').hidden = invitations.length === 0;
  $('invitations').replaceChildren(...invitations.map((invitation) => {
    const li = document.createElement('li');
    const who = document.createElement('span');
    who.className = 'who';
    who.textContent = `${invitation.inviter_name} (${invitation.inviter_email})`;
    li.append(who, invitation.title ? `invites you to ${invitation.title}` : 'wants to talk with you', document.createElement('br'));
    const answers = [['accept', 'Accept', 'Invitation accepted.'], ['decline', 'Decline', 'Invitation declined.'],
      ['block', `Block ${invitation.inviter_name}`, `${invitation.inviter_name} is blocked.`]];
    for (const [action, label, done] of answers) {
      const button = document.createElement('button');
      button.type = 'button';
      button.className = action === 'accept' ? '' : 'secondary';
      button.dataset.action = action;
      button.textContent = label;
      button.addEventListener('click', async () => {
        button.disabled = true;
        try {
          const conversation = await api('POST', `/invitations/${invitation.id}/${action}`);
          if (action === 'accept') await loadConversations(conversation.id);
          else await loadInvitations();
          $('messages-status').textContent = done;
        } catch (error) { fail('messages-status', error); button.disabled = false; }
      });
      li.append(button);
    }
    return li;
  }));
}

/** New messages arrive on the realtime WebSocket, which belongs to the session that opened it: signing out closes it
 * (the server closes it too, with 1008), and a socket the server closed is opened again for the current session
 * (at most 5 times in a row without one that opened). */
let socketFailures = 0;
function listen() {
  if (!tokens || (socket && socket.readyState <= 1)) return;
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  const current = new WebSocket(`${scheme}://${location.host}/ws?access_token=${encodeURIComponent(tokens.access_token)}`);
  socket = current;
  current.addEventListener('open', () => { socketFailures = 0; });
  current.addEventListener('close', () => {
    if (socket !== current) return;
    socket = null;
    if (tokens && ++socketFailures <= 5) setTimeout(listen, 1000);
  });
  current.addEventListener('message', (event) => {
    const data = JSON.parse(event.data);
    if (data.type === 'conversation.updated') loadConversations($('conversation').value);
    else if (data.type === 'invitation.created') loadInvitations().catch((error) => fail('messages-status', error));
    else if (data.conversation_id && data.conversation_id === $('conversation').value && data.type.startsWith('message.')) loadMessages();
    else if (data.type === 'transcript.ready' && data.conversation_id === $('conversation').value) loadMessages();
  });
}

async function loadMessages() {
  const id = $('conversation').value;
  if (!id) { $('messages').replaceChildren(); return; }
  const page = await api('GET', `/conversations/${id}/messages`);
  const me = userID();
  $('messages').replaceChildren(...page.messages.slice().reverse().map((message) => {
    const li = document.createElement('li');
    li.className = message.sender_id === me ? 'callee' : 'assistant';
    const who = document.createElement('span');
    who.className = 'who';
    who.textContent = `${message.sender_name} · ${new Date(message.created_at).toLocaleTimeString()}${message.urgent ? ' · urgent' : ''}`;
    li.append(who, message.deleted_at ? 'Deleted' : (message.content ?? message.transcript ?? '(voice message)'));
    if (message.audio_url) {
      const audio = document.createElement('audio');
      audio.controls = true;
      audio.preload = 'none';
      audio.src = message.audio_url;
      audio.setAttribute('aria-label', `Recording from ${message.sender_name}`);
      li.append(document.createElement('br'), audio);
    }
    if (!message.deleted_at && (message.content || message.transcript)) {
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'secondary';
      button.textContent = 'Play in their voice';
      button.addEventListener('click', async () => {
        button.disabled = true;
        try {
          const speech = await api('POST', `/messages/${message.id}/speech`);
          const audio = new Audio(speech.audio_url);
          await audio.play();
          $('messages-status').textContent = `Playing in ${speech.voice === 'cloned' ? `${message.sender_name}'s voice` : 'a standard voice'}.`;
        } catch (error) { fail('messages-status', error); }
        button.disabled = false;
      });
      li.append(document.createElement('br'), button);
    }
    return li;
  }));
}
$('conversation').addEventListener('change', loadMessages);

$('conversation-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  try {
    const conversation = await api('POST', '/conversations', { kind: 'direct', member_emails: [$('conversation-email').value.trim()] });
    await loadConversations(conversation.id);
    $('messages-status').textContent = 'Conversation ready.';
  } catch (error) { fail('messages-status', error); }
});

let recorder = null;
let recording = null;

/** Records through an AudioWorklet (`/assets/pcm-recorder.js`: PCM16, 24 kHz, mono) and streams the audio to
 * `GET /audio/stream` while recording, so the transcript arrives moments after Stop (partial transcripts fill the
 * review box as they come). When the stream cannot start, or the server answers an `error` event, the recording made
 * in the page is uploaded as a WAV file instead (`POST /audio` then `POST /transcriptions`). Browsers without
 * AudioWorklet record with MediaRecorder and upload. */
$('record').addEventListener('click', async () => {
  if (recorder) { const current = recorder; recorder = null; await current.stop(); return; }
  let stream = null;
  try {
    stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    recorder = window.AudioWorkletNode ? await streamRecording(stream) : uploadRecording(stream);
    recording = null;
    $('review').hidden = true;
    $('record').textContent = 'Stop';
    $('record').setAttribute('aria-pressed', 'true');
  } catch (error) {
    stream?.getTracks().forEach((track) => track.stop());
    fail('messages-status', error);
  }
});

function recordingStopped() {
  $('record').textContent = 'Record';
  $('record').setAttribute('aria-pressed', 'false');
}

/** The old path: MediaRecorder, then a WAV upload once the recording is over. */
function uploadRecording(stream) {
  const chunks = [];
  const media = new MediaRecorder(stream);
  media.addEventListener('dataavailable', (event) => chunks.push(event.data));
  const stopped = new Promise((resolve) => media.addEventListener('stop', resolve));
  media.start();
  $('messages-status').textContent = 'Recording…';
  return {
    async stop() {
      media.stop();
      await stopped;
      stream.getTracks().forEach((track) => track.stop());
      recordingStopped();
      try { await review(await toWAV(new Blob(chunks, { type: chunks[0]?.type }))); } catch (error) { fail('messages-status', error); }
    },
  };
}

/** Streams the microphone to `GET /audio/stream` as it records; keeps the PCM to play it back (and to upload it when
 * the stream fails). */
async function streamRecording(stream) {
  const context = new AudioContext({ sampleRate: 24000 });
  await context.audioWorklet.addModule('/assets/pcm-recorder.js');
  const source = context.createMediaStreamSource(stream);
  const worklet = new AudioWorkletNode(context, 'pcm-recorder');
  source.connect(worklet);
  const frames = [];
  const pending = [];
  let failure = null;
  let ready = false;
  let transcript = '';
  let settle;
  const outcome = new Promise((resolve) => { settle = resolve; });
  let flushed;
  const drained = new Promise((resolve) => { flushed = resolve; });

  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  const socket = new WebSocket(`${scheme}://${location.host}/audio/stream?access_token=${encodeURIComponent(tokens.access_token)}`);
  socket.binaryType = 'arraybuffer';
  socket.addEventListener('open', () => socket.send(JSON.stringify({ type: 'start', format: 'pcm16', sample_rate: 24000 })));
  socket.addEventListener('message', (event) => {
    let data;
    try { data = JSON.parse(event.data); } catch { return; }
    if (data.type === 'ready') {
      ready = true;
      pending.splice(0).forEach((frame) => socket.send(frame));
    } else if (data.type === 'transcript.delta') {
      transcript += data.delta ?? '';
      $('review-transcript').value = transcript;
      $('review').hidden = false;
    } else if (data.type === 'transcript.completed') {
      settle({ completed: data });
    } else if (data.type === 'error') {
      failure = data;
      $('messages-status').textContent = `Live transcription stopped (${data.detail ?? data.code}); the recording will be uploaded when you stop.`;
      settle({ failed: data });
    }
  });
  let stopping = false;
  socket.addEventListener('close', () => {
    if (!failure && !stopping) {
      failure = { detail: ready ? 'the connection closed' : 'the live transcription could not start' };
      $('messages-status').textContent = `Live transcription stopped (${failure.detail}); the recording will be uploaded when you stop.`;
    }
    settle({ failed: failure ?? { detail: 'the connection closed before the transcript' } });
  });
  worklet.port.onmessage = (event) => {
    if (event.data.done) { flushed(); return; }
    const frame = event.data.pcm;
    frames.push(frame);
    if (failure) return;
    if (ready && socket.readyState === WebSocket.OPEN) socket.send(frame);
    else if (socket.readyState <= WebSocket.OPEN) pending.push(frame);
  };
  $('messages-status').textContent = 'Recording… (transcribing as you speak)';

  return {
    async stop() {
      stopping = true;
      $('record').disabled = true;
      worklet.port.postMessage('flush');
      await Promise.race([drained, new Promise((resolve) => setTimeout(resolve, 1000))]);
      source.disconnect();
      stream.getTracks().forEach((track) => track.stop());
      context.close();
      recordingStopped();
      const wav = pcmToWAV(frames, 24000);
      if (ready && !failure && socket.readyState === WebSocket.OPEN) {
        $('messages-status').textContent = 'Finishing the transcript…';
        $('review-transcript').value = transcript;
        $('review-audio').src = URL.createObjectURL(wav);
        $('send-voice').disabled = true;
        socket.send(JSON.stringify({ type: 'end' }));
      } else {
        failure ??= { detail: 'the live transcription had not started' };
        socket.close();
      }
      const result = await outcome;
      $('send-voice').disabled = false;
      $('record').disabled = false;
      try {
        if (result.completed) {
          const { audio, transcript: final } = result.completed;
          recording = audio.audio_id;
          $('review-audio').src = URL.createObjectURL(wav);
          $('review-transcript').value = final.transcript;
          $('review').hidden = false;
          $('messages-status').textContent = `Recorded ${audio.duration_seconds.toFixed(1)} s, transcribed while recording. Review it, then send.`;
        } else if (result.failed.audio) {
          // The recording is stored but its transcript failed: transcribe the stored file.
          await review(wav, result.failed.audio, `Live transcription failed (${result.failed.detail ?? result.failed.code}): `);
        } else {
          await review(wav, null, `Live transcription failed (${result.failed.detail ?? result.failed.code}): uploading instead. `);
        }
      } catch (error) { fail('messages-status', error); }
    },
  };
}

/** A 16-bit mono WAV file of PCM16 frames (ArrayBuffers). */
function pcmToWAV(frames, sampleRate) {
  const length = frames.reduce((total, frame) => total + frame.byteLength, 0);
  const header = new ArrayBuffer(44);
  const view = new DataView(header);
  const text = (offset, value) => [...value].forEach((c, i) => view.setUint8(offset + i, c.charCodeAt(0)));
  text(0, 'RIFF'); view.setUint32(4, 36 + length, true); text(8, 'WAVE');
  text(12, 'fmt '); view.setUint32(16, 16, true); view.setUint16(20, 1, true); view.setUint16(22, 1, true);
  view.setUint32(24, sampleRate, true); view.setUint32(28, sampleRate * 2, true); view.setUint16(32, 2, true); view.setUint16(34, 16, true);
  text(36, 'data'); view.setUint32(40, length, true);
  return new Blob([header, ...frames], { type: 'audio/wav' });
}

async function toWAV(blob) {
  const context = new AudioContext();
  const audio = await context.decodeAudioData(await blob.arrayBuffer());
  context.close();
  const samples = audio.getChannelData(0);
  const pcm = new Int16Array(samples.length);
  samples.forEach((sample, i) => { pcm[i] = Math.max(-1, Math.min(1, sample)) * 0x7fff; });
  return pcmToWAV([pcm.buffer], audio.sampleRate);
}

/** Uploads a finished recording (unless `upload` is an already stored one) and transcribes it as a file. */
async function review(wav, upload = null, note = '') {
  $('messages-status').textContent = `${note}Uploading and transcribing…`;
  const stored = upload ?? await (await raw('POST', '/audio', { body: wav, contentType: 'audio/wav' })).json();
  const transcript = await api('POST', '/transcriptions', { audio_id: stored.audio_id });
  recording = stored.audio_id;
  $('review-audio').src = URL.createObjectURL(wav);
  $('review-transcript').value = transcript.transcript;
  $('review').hidden = false;
  $('messages-status').textContent = `${note}Recorded ${stored.duration_seconds.toFixed(1)} s. Review it, then send.`;
}

$('send-voice').addEventListener('click', async () => {
  const id = $('conversation').value;
  if (!id || !recording) { $('messages-status').textContent = 'Choose a conversation first.'; return; }
  try {
    await api('POST', `/conversations/${id}/messages`, { client_message_id: crypto.randomUUID(), send_mode: 'audio', audio_id: recording });
    recording = null;
    $('review').hidden = true;
    $('messages-status').textContent = 'Sent.';
    await loadMessages();
  } catch (error) { fail('messages-status', error); }
});

$('discard-voice').addEventListener('click', () => { recording = null; $('review').hidden = true; $('messages-status').textContent = 'Discarded.'; });

$('summary').addEventListener('click', async () => {
  const id = $('conversation').value;
  if (!id) { $('messages-status').textContent = 'Choose a conversation first.'; return; }
  $('messages-status').textContent = 'Summarizing…';
  try {
    const summary = await api('POST', `/conversations/${id}/summary`, {});
    $('summary-text').textContent = summary.overview;
    $('summary-audio').src = summary.audio_url ?? '';
    $('summary-result').hidden = false;
    $('messages-status').textContent = `Summary of ${summary.message_count} messages.`;
  } catch (error) { fail('messages-status', error); }
});

// MARK: - Stories

let storyVoices = [];

async function loadStories() {
  try {
    const [heroes, storyEvents, voices] = await Promise.all([api('GET', '/heroes'), api('GET', '/stories/events'), api('GET', '/stories/voices')]);
    $('story-hero').replaceChildren(...heroes.heroes.map((h) => option(h.id, h.name)));
    $('no-hero').hidden = heroes.heroes.length > 0;
    $('story-event').replaceChildren(...storyEvents.events.map((e) => option(e.id, e.title)));
    // The name only in the list (see the call's voices); the description under it.
    const chosen = $('story-voice').value;
    storyVoices = voices.voices;
    $('story-voice').replaceChildren(...storyVoices.map((v) => option(v.id, v.name)));
    if (chosen) $('story-voice').value = chosen;
    describeStoryVoice();
  } catch (error) { fail('story-status', error); }
}

function describeStoryVoice() {
  $('story-voice-description').textContent = storyVoices.find((v) => v.id === $('story-voice').value)?.description ?? '';
}
$('story-voice').addEventListener('change', describeStoryVoice);

$('hero-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  try {
    const hero = await api('POST', '/heroes', {
      name: $('hero-name').value.trim(), appearance: $('hero-appearance').value.trim(),
      traits: $('hero-traits').value.split(',').map((t) => t.trim()).filter(Boolean) });
    // The avatar, standard or HD (the image model's highest quality), when one is asked for.
    const quality = $('hero-avatar').value;
    let drawn = hero;
    if (quality) {
      $('story-status').textContent = `Drawing ${hero.name}'s ${quality === 'hd' ? 'HD ' : ''}avatar…`;
      drawn = await api('POST', `/heroes/${hero.id}/avatar`, { quality });
    }
    const avatar = $('hero-avatar-out');
    avatar.hidden = !drawn.avatar_url;
    if (drawn.avatar_url) { avatar.src = drawn.avatar_url; avatar.alt = `${hero.name}'s avatar`; }
    await loadStories();
    $('story-hero').value = hero.id;
    $('story-status').textContent = `${hero.name} is ready for a story.`;
  } catch (error) { fail('story-status', error); }
});

$('story-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  $('make-story').disabled = true;
  try {
    const accepted = await api('POST', '/stories', {
      hero_id: $('story-hero').value, event_id: $('story-event').value, language: $('story-language').value,
      voice: $('story-voice').value, length_minutes: Number($('story-length').value), illustration_count: Number($('story-pictures').value) });
    await followStory(accepted.id);
  } catch (error) { fail('story-status', error); }
  $('make-story').disabled = false;
});

/** Shows the story as it is made: its text as it is written, each narration part and picture as it is ready. */
async function followStory(id) {
  $('story').hidden = false;
  $('story-title').textContent = '';
  $('story-text').textContent = '';
  $('story-audio').replaceChildren();
  $('story-pictures-out').replaceChildren();
  let streamed = '';
  for await (const event of events(`/stories/${id}/events`)) {
    const progress = event.data;
    if (progress.type === 'text' && progress.delta) {
      streamed += progress.delta;
      $('story-text').textContent = streamed;
    } else if (progress.type === 'stage') {
      $('story-status').textContent = `${progress.stage}: ${progress.status}`;
    }
    if (progress.story) drawStory(progress.story);
    else if (progress.type === 'narration_part' || progress.type === 'illustration') drawStory(await api('GET', `/stories/${id}`));
    if (event.name === 'done' || event.name === 'deleted') break;
  }
  $('story-status').textContent = 'The story is ready.';
}

function drawStory(story) {
  $('story-title').textContent = story.title ?? '';
  if (story.content) $('story-text').textContent = story.content;
  const parts = story.audio?.url ? [{ url: story.audio.url, label: 'The whole story' }]
    : (story.audio?.parts ?? []).map((p) => ({ url: p.url, label: `Part ${p.part}` }));
  $('story-audio').replaceChildren(...parts.map((part) => {
    const audio = document.createElement('audio');
    audio.controls = true;
    audio.preload = 'none';
    audio.src = part.url;
    audio.setAttribute('aria-label', part.label);
    return audio;
  }));
  $('story-pictures-out').replaceChildren(...story.illustrations.filter((i) => i.url).map((i) => {
    const img = document.createElement('img');
    img.src = i.url;
    img.alt = story.scenes.find((s) => s.number === i.number)?.text ?? `Illustration ${i.number}`;
    return img;
  }));
}

show();
