// The details of one task: fields, actions for people, its live log, gate report and history.
import { api, follow } from './api.js';

const $ = (id) => document.getElementById(id);
const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
const TERMINAL = new Set(['failed', 'closed', 'refused', 'cancelled']);
const MAX_LOG_LINES = 400;

// Which actions a task in `status` offers.
const ACTIONS = {
  prioritize: (t) => !TERMINAL.has(t.status) && t.priority !== 0,
  block: (t) => ['open', 'claimed', 'in_progress', 'waiting_for_subtasks'].includes(t.status),
  unblock: (t) => t.status === 'blocked',
  'close-merged': (t) => t.status === 'blocked' || t.status === 'done',
  cancel: (t) => !TERMINAL.has(t.status),
};
const CALLS = {
  prioritize: (id) => ['POST', `/tasks/${id}/prioritize`, {}],
  block: (id, reason) => ['POST', `/tasks/${id}/block`, { reason: reason || 'blocked from the board' }],
  unblock: (id, reason) => ['POST', `/tasks/${id}/unblock`, reason ? { reason } : {}],
  'close-merged': (id, reason) => ['POST', `/tasks/${id}/close`, { merged: true, ...(reason ? { reason } : {}) }],
  cancel: (id, reason) => ['POST', `/tasks/${id}/cancel`, { reason: reason || 'cancelled from the board' }],
};

export class Detail {
  constructor(you) {
    this.you = you;
    this.task = null;
    this.log = null;
    this.logSid = null;
    $('d-close').addEventListener('click', () => this.close());
    document.addEventListener('keydown', (e) => { if (e.key === 'Escape') this.close(); });
    for (const b of document.querySelectorAll('#d-actions button')) b.addEventListener('click', () => this.act(b.dataset.action));
  }

  get openId() { return this.task?.id ?? null; }

  /** Show a task: its card now, then its full record, gates and history. */
  async open(card) {
    this.task = card;
    $('detail').hidden = false;
    $('d-action-note').textContent = '';
    $('d-log').textContent = '';
    this.render();
    const full = await api('GET', `/tasks/${card.id}`);
    if (full.status === 200 && this.task?.id === card.id) { this.task = { ...this.task, ...full.body }; this.render(); }
    await Promise.all([this.loadGates(), this.loadHistory()]);
  }

  close() {
    this.task = null;
    this.stopLog();
    $('detail').hidden = true;
  }

  /** A card changed: refresh the panel when it is the open task. */
  changed(card) {
    if (!this.task || card.id !== this.task.id) return;
    const moved = card.status !== this.task.status;
    this.task = { ...this.task, ...card };
    this.render();
    // The state commit follows a change within moments (seconds on a busy server): read the history again
    // until it shows the task's version.
    if (moved) { void this.loadGates(); void this.followHistory(card.id, card.version); }
  }

  async followHistory(id, version) {
    for (const ms of [0, 1000, 2000, 4000, 8000, 16000]) {
      if (ms) await new Promise((r) => setTimeout(r, ms));
      if (this.task?.id !== id) return;
      const newest = await this.loadHistory();
      if (newest !== undefined && newest >= version) return;
    }
  }

  render() {
    const t = this.task;
    $('d-title').textContent = t.title;
    const rows = [
      ['id', t.id], ['status', t.status], ['role', t.role], ['priority', t.priority], ['version', t.version],
      ['agent', t.assigned_agent || t.claimed_by_session || '—'], ['progress', typeof t.progress === 'number' ? `${t.progress}%${t.progress_message ? ` — ${t.progress_message}` : ''}` : '—'],
      ['reason', t.status_reason || '—'], ['created', t.created_at], ['updated', t.updated_at],
      ...(t.result_summary ? [['result', t.result_summary]] : []), ...(t.failure ? [['failure', `${t.failure.type}: ${t.failure.reason}`]] : []),
    ];
    $('d-fields').innerHTML = rows.map(([k, v]) => `<dt>${esc(k)}</dt><dd data-field="${esc(k)}">${esc(v)}</dd>`).join('');
    $('d-description').textContent = t.description ?? '';
    const viewer = this.you?.role === 'viewer';
    for (const b of document.querySelectorAll('#d-actions button')) {
      const ok = ACTIONS[b.dataset.action](t);
      b.hidden = !ok;
      b.disabled = viewer;
      b.title = viewer ? 'viewers cannot change tasks' : '';
    }
    if (viewer) $('d-action-note').textContent = 'Signed in as a viewer: read only.';
    this.followLog(t.claimed_by_session);
  }

  async act(action) {
    const t = this.task;
    if (!t) return;
    const [method, path, body] = CALLS[action](t.id, $('d-reason').value.trim());
    const r = await api(method, path, body);
    $('d-action-note').textContent = r.status < 300 ? `${action}: done` : `${action} refused (${r.status}): ${r.body?.detail ?? ''}`;
    if (r.status < 300) $('d-reason').value = '';
  }

  // The session's log, live: the tail so far, then new lines as the agent writes them.
  followLog(sid) {
    if (!sid) $('d-log-state').textContent = '(no agent session)';
    if (sid === this.logSid) return;
    this.stopLog();
    this.logSid = sid;
    if (!sid) { $('d-log-state').textContent = '(no agent session)'; return; }
    const pre = $('d-log');
    const lines = [];
    this.log = follow(`/agents/${encodeURIComponent(sid)}/stream`, {
      onEvent: (ev) => {
        if (ev.event !== 'log') return;
        try { lines.push(JSON.parse(ev.data).line); } catch { return; }
        if (lines.length > MAX_LOG_LINES) lines.splice(0, lines.length - MAX_LOG_LINES);
        const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
        pre.textContent = lines.join('\n');
        if (atEnd) pre.scrollTop = pre.scrollHeight;
      },
      onState: (s) => { $('d-log-state').textContent = s === 'live' ? `(${sid}, live)` : s === 'denied' ? `(${sid}: no log)` : `(${sid}, reconnecting…)`; },
    });
  }

  stopLog() {
    this.log?.close();
    this.log = null;
    this.logSid = null;
  }

  async loadGates() {
    const id = this.task?.id;
    const r = await api('GET', `/tasks/${id}/gates`);
    if (this.task?.id !== id) return;
    if (r.status !== 200) { $('d-gates').innerHTML = '<p class="muted">No gate report yet.</p>'; return; }
    const g = r.body;
    $('d-gates').innerHTML = `<p class="${g.overall_pass ? 'pass' : 'fail'}">${g.overall_pass ? 'passed' : 'failed'} · ${esc(g.finished_at)}</p><ul>`
      + g.results.map((x) => `<li class="${x.status === 'pass' ? 'pass' : 'fail'}"><b>${esc(x.name)}</b> ${esc(x.status)}${x.required ? '' : ' (optional)'} · ${esc(x.duration_ms)} ms<pre>${esc(x.output_tail.slice(-600))}</pre></li>`).join('')
      + '</ul>';
  }

  async loadHistory() {
    const id = this.task?.id;
    const r = await api('GET', `/tasks/${id}/history?limit=30`);
    if (this.task?.id !== id) return;
    const entries = r.status === 200 ? r.body.entries : [];
    this.showHistory(entries);
    return entries.reduce((max, e) => Math.max(max, e.version ?? 0), 0);
  }

  showHistory(entries) {
    $('d-history').innerHTML = entries.length
      ? entries.map((e) => `<li><b>${esc(e.status ?? 'removed')}</b> v${esc(e.version ?? '—')} · ${esc(e.committed_at)}${e.actors.length ? ` · ${esc(e.actors.join(', '))}` : ''}<br><code>${esc(e.commit.slice(0, 12))}</code> ${esc(e.message)}</li>`).join('')
      : '<li class="muted">Not in refs/sdd/state yet.</li>';
  }
}
