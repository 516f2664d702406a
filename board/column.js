// One status column, virtualised: only the cards in view (plus a margin) exist in the page, so a column
// of 10,000 tasks scrolls as lightly as one of ten.

export const CARD_HEIGHT = 88;
const OVERSCAN = 6;

const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

/** The HTML of one card (title, role, agent, priority, progress); positioned by the column. */
export function cardHtml(t) {
  const agent = t.assigned_agent || t.claimed_by_session || '';
  const pct = typeof t.progress === 'number' ? Math.max(0, Math.min(100, t.progress)) : null;
  return `<article class="card s-${esc(t.status)}" data-id="${esc(t.id)}" tabindex="0" title="${esc(t.title)}">`
    + `<div class="c-title">${esc(t.title)}</div>`
    + `<div class="c-meta"><span class="c-role">${esc(t.role)}</span>${agent ? `<span class="c-agent">${esc(agent)}</span>` : ''}`
    + `<span class="c-prio">P${esc(t.priority)}</span><span class="c-id">${esc(t.id.slice(-6))}</span></div>`
    + (pct === null ? '' : `<div class="c-progress" data-pct="${pct}" title="${pct}%${t.progress_message ? `: ${esc(t.progress_message)}` : ''}"><span></span></div>`)
    + '</article>';
}

export class Column {
  constructor(status, label) {
    this.status = status;
    this.items = [];
    this.el = document.createElement('section');
    this.el.className = 'column';
    this.el.dataset.status = status;
    this.el.innerHTML = `<h2><span class="col-name">${esc(label)}</span> <span class="count">0</span></h2><div class="col-body"><div class="spacer"></div><div class="cards"></div></div>`;
    this.body = this.el.querySelector('.col-body');
    this.spacer = this.el.querySelector('.spacer');
    this.cards = this.el.querySelector('.cards');
    this.countEl = this.el.querySelector('.count');
    this.drawn = '';
    this.body.addEventListener('scroll', () => this.draw(), { passive: true });
  }

  /** Replace the column's tasks (already sorted) and redraw what is in view. */
  set(items) {
    this.items = items;
    this.countEl.textContent = String(items.length);
    this.el.classList.toggle('empty', items.length === 0);
    this.spacer.style.height = `${items.length * CARD_HEIGHT}px`;
    this.drawn = '';
    this.draw();
  }

  /** Draw the cards between the scroll position and the bottom of the view. */
  draw() {
    const top = this.body.scrollTop;
    const height = this.body.clientHeight || 800;
    const first = Math.max(0, Math.floor(top / CARD_HEIGHT) - OVERSCAN);
    const last = Math.min(this.items.length, Math.ceil((top + height) / CARD_HEIGHT) + OVERSCAN);
    const key = `${first}:${last}:${this.items.length}`;
    if (key === this.drawn) return;
    this.drawn = key;
    let html = '';
    for (let i = first; i < last; i++) html += cardHtml(this.items[i]);
    this.cards.innerHTML = html;
    // Positions and widths through the DOM: the page's CSP allows no inline style attributes.
    let i = first;
    for (const el of this.cards.children) {
      el.style.top = `${i++ * CARD_HEIGHT}px`;
      const bar = el.querySelector('.c-progress');
      if (bar) bar.firstElementChild.style.width = `${bar.dataset.pct}%`;
    }
  }

  /** Scroll the task's card into view (when it is in this column). */
  reveal(id) {
    const i = this.items.findIndex((t) => t.id === id);
    if (i < 0) return false;
    const top = i * CARD_HEIGHT;
    if (top < this.body.scrollTop || top + CARD_HEIGHT > this.body.scrollTop + this.body.clientHeight) this.body.scrollTop = Math.max(0, top - CARD_HEIGHT);
    this.draw();
    return true;
  }
}
