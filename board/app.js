// The live board: load /dashboard/data, then follow /events from its sequence number.
import { api, follow, saveToken, savedToken } from './api.js';
import { Board, STATUSES } from './board.js';
import { Detail } from './detail.js';

const $ = (id) => document.getElementById(id);
const board = new Board($('board'));
let detail = null;
let events = null;
let seq = null;

function setLive(state) {
  const el = $('live');
  el.className = `live ${state === 'live' ? 'on' : 'off'}`;
  el.textContent = { live: 'live', retrying: 'reconnecting…', denied: 'not signed in', loading: 'loading…' }[state] ?? state;
}

function showStats() {
  const c = board.counts();
  const total = Object.values(c).reduce((a, b) => a + b, 0);
  $('stats').textContent = `${total} tasks · ${STATUSES.filter(([s]) => c[s]).map(([s, label]) => `${label.toLowerCase()} ${c[s]}`).join(' · ')}`;
}
board.onFlush = showStats;

function showAlerts(alerts) {
  $('alerts').innerHTML = '';
  for (const a of alerts ?? []) {
    const p = document.createElement('p');
    p.className = `alert ${a.level}`;
    p.textContent = a.message;
    if (a.detail) p.title = a.detail;
    $('alerts').append(p);
  }
}

// Who is looking; the token box shrinks to "Forget token" once a pasted token works (and disappears for a sign-in).
function showWho(you) {
  const how = savedToken() ? 'pasted token' : you ? (you.signed_in ? 'signed in' : 'local') : '';
  $('who').textContent = you ? `${you.actor} · ${you.role} · ${how}` : '';
  $('token').hidden = $('token-save').hidden = Boolean(you);
  $('token-forget').hidden = !savedToken();
  $('token-form').hidden = Boolean(you) && !savedToken();
}

/** Load the whole board, then follow its changes from the sequence number it was loaded at. */
async function load() {
  setLive('loading');
  events?.close();
  const r = await api('GET', '/dashboard/data');
  if (r.status === 401 || r.status === 403) {
    setLive('denied');
    $('signin').hidden = false;
    showWho(null);
    return;
  }
  if (r.status !== 200) { setLive(`error ${r.status}`); setTimeout(load, 3000); return; }
  $('signin').hidden = true;
  const d = r.body;
  seq = d.seq;
  board.load(d.tasks);
  showAlerts(d.alerts);
  showWho(d.you);
  if (!detail) {
    detail = new Detail(d.you);
    board.onCard((card) => detail.changed(card));
  } else detail.you = d.you;
  events = follow('/events', { lastEventId: seq, onEvent, onState: setLive });
}

function onEvent(ev) {
  if (ev.id !== null) seq = Number(ev.id);
  if (ev.event === 'reset') { void load(); return; }
  if (ev.event !== 'task_created' && ev.event !== 'task_updated') return;
  try { board.upsert(JSON.parse(ev.data)); } catch { /* not JSON: ignore */ }
}

// A click on a card opens its details.
$('board').addEventListener('click', (e) => {
  const card = e.target.closest('.card');
  const t = card && board.cards.get(card.dataset.id);
  if (t) void detail?.open(t);
});
$('board').addEventListener('keydown', (e) => {
  if (e.key !== 'Enter') return;
  const t = e.target.closest?.('.card') && board.cards.get(e.target.dataset.id);
  if (t) void detail?.open(t);
});
$('filter').addEventListener('input', (e) => board.setFilter(e.target.value));
$('token-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const v = $('token').value.trim().replace(/^Bearer\s+/i, '');
  $('token').value = '';
  if (v) { saveToken(v); void load(); }
});
$('token-forget').addEventListener('click', () => { saveToken(''); void load(); });
window.svcBoard = { board, reveal: (id) => board.reveal(id) };
void load();
