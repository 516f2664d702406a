// Every fixture payload of fixtures/webhooks normalises to the ticket event cases.json names; adapters by name; delivery ids.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { TRACKERS, trackerRegistry } from '../../src/webhooks/index.ts';
import { deliveryId } from '../../src/webhooks/trackers/registry.ts';
import { PROJECT } from '../helpers/server.ts';

const DIR = join(PROJECT, 'fixtures', 'webhooks');
const { cases } = JSON.parse(readFileSync(join(DIR, 'cases.json'), 'utf8')) as {
  cases: { adapter: string; file: string; headers: Record<string, string>; expect: { action: string; ticket: Record<string, unknown> } | null }[];
};
const T = suite('webhooks: tracker payloads');
const registry = trackerRegistry();
const header = (h: Record<string, string>) => (name: string) => h[name];

T('the fixtures cover every adapter, each with opened, edited, closed, reopened, labelled and an ignored event', () => {
  for (const a of TRACKERS) {
    const mine = cases.filter((c) => c.adapter === a.name);
    const actions = new Set(mine.map((c) => c.expect?.action ?? 'ignored'));
    for (const want of ['opened', 'edited', 'closed', 'reopened', 'labelled', 'ignored']) assert.ok(actions.has(want), `${a.name} has a ${want} fixture`);
  }
});

for (const c of cases) {
  T(`${c.file} → ${c.expect ? c.expect.action : 'ignored'}`, () => {
    const a = registry.find(c.adapter)!;
    const body = JSON.parse(readFileSync(join(DIR, c.file), 'utf8'));
    const ev = a.fromWebhook(body, header(c.headers));
    if (!c.expect) { assert.is(ev, null); return; }
    assert.ok(ev, 'an event');
    assert.is(ev!.action, c.expect.action);
    for (const [k, v] of Object.entries(c.expect.ticket)) assert.equal((ev!.ticket as unknown as Record<string, unknown>)[k], v, `ticket.${k}`);
  });
}

T('adapters are found by canonical and vendor name, in any case; others are unknown', () => {
  const pairs = [['tracker_a', 'jira'], ['tracker_b', 'github'], ['tracker_c', 'gitlab'], ['tracker_d', 'linear'], ['tracker_e', 'plane']];
  for (const [name, vendor] of pairs) {
    assert.is(registry.find(name!)?.name, name);
    assert.is(registry.find(vendor!)?.name, name);
    assert.is(registry.find(vendor!.toUpperCase())?.name, name);
  }
  assert.is(registry.find('bitbucket'), undefined);
});

T('delivery id: <adapter>:<header> under the literal or the native header name, else <adapter>:<sha256 of the body>', () => {
  const b = registry.find('github')!;
  const raw = Buffer.from('{"action":"opened"}');
  assert.is(deliveryId(b, raw, header({ 'x-github-delivery': 'abc' })), 'tracker_b:abc');
  assert.is(deliveryId(b, raw, header({ 'x-tracker_b-delivery': 'lit' })), 'tracker_b:lit');
  assert.is(deliveryId(b, raw, header({})), 'tracker_b:d592421cfe150deec6c49b8989cc99478e39c7f8cdd4c36f5b1c4cfeff394e24');
  assert.is(deliveryId(registry.find('jira')!, raw, header({ 'x-atlassian-webhook-identifier': '7' })), 'tracker_a:7');
  assert.is(deliveryId(registry.find('gitlab')!, raw, header({ 'x-gitlab-event-uuid': 'u' })), 'tracker_c:u');
  assert.is(deliveryId(registry.find('linear')!, raw, header({ 'linear-delivery': 'l' })), 'tracker_d:l');
  assert.is(deliveryId(registry.find('plane')!, raw, header({ 'x-tracker_e-delivery': 'p' })), 'tracker_e:p');
});

T('a pull request, a ticket without an id and a non-issue body are not tickets', () => {
  const b = registry.find('github')!;
  assert.is(b.fromWebhook({ action: 'opened', issue: { id: 1, number: 2, pull_request: {} } }, header({ 'x-github-event': 'issues' })), null);
  assert.is(b.fromWebhook({ action: 'opened' }, header({ 'x-github-event': 'issues' })), null);
  assert.is(registry.find('linear')!.fromWebhook({ type: 'Issue', action: 'create', data: {} }, header({})), null);
  assert.is(registry.find('jira')!.fromWebhook({ webhookEvent: 'jira:issue_created', issue: {} }, header({})), null);
});

T.run();
