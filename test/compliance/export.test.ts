import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type AnySchema } from 'ajv';
import addFormatsCjs from 'ajv-formats';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CSV_COLUMNS, renderExport, type ExportInput } from '../../src/compliance/index.ts';
import { FIXTURES, fixtureRepo, svcOut } from './tree.ts';

const addFormats = addFormatsCjs as unknown as (a: Ajv) => Ajv;
const schema = (f: string) => JSON.parse(readFileSync(join(FIXTURES, 'schemas', f), 'utf8')) as AnySchema;
const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));
const validators = {
  sarif: ajv.compile(schema('sarif-schema-2.1.0.json')),
  oscal: ajv.compile(schema('oscal_assessment-results_schema.json')),
  csv: ajv.compile(schema('evidence-csv-row.schema.json')),
};
const errors = (v: { errors?: unknown }) => JSON.stringify(v.errors, null, 1);

// RFC 4180: quoted fields with doubled quotes, CRLF records.
function parseCsv(text: string): Record<string, string>[] {
  const rows: string[][] = [];
  let row: string[] = [], cell = '', quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) { if (c === '"' && text[i + 1] === '"') { cell += '"'; i++; } else if (c === '"') quoted = false; else cell += c; continue; }
    if (c === '"') quoted = true;
    else if (c === ',') { row.push(cell); cell = ''; } else if (c === '\r' && text[i + 1] === '\n') { row.push(cell); rows.push(row); row = []; cell = ''; i++; } else cell += c;
  }
  const [head, ...body] = rows;
  assert.equal(head, [...CSV_COLUMNS]);
  return body.map((r) => Object.fromEntries(head!.map((h, i) => [h, r[i] ?? ''])));
}

const board = fixtureRepo('board');
const exported = (format: string) => svcOut(board.dir, ['compliance', 'export', '--format', format, '--since', '2026-01-01', '--until', '2026-01-31']);

test('the SARIF export of the board validates against the SARIF 2.1.0 schema', async () => {
  const doc = JSON.parse(await exported('sarif'));
  assert.ok(validators.sarif(doc), errors(validators.sarif));
  const results = doc.runs[0].results;
  assert.equal(results.map((r: { kind: string }) => r.kind), ['pass', 'fail', 'fail', 'fail', 'pass']);
  assert.is(results[0].properties.merge_commit.length, 40);
  // The validator does refuse what the schema refuses.
  assert.not.ok(validators.sarif({ ...doc, version: '2.0.0' }));
});

test('the OSCAL export validates against the OSCAL 1.0.4 assessment-results schema', async () => {
  const doc = JSON.parse(await exported('oscal'));
  assert.ok(validators.oscal(doc), errors(validators.oscal));
  const r = doc['assessment-results'].results[0];
  assert.is(r.findings.length, 5);
  assert.is(r.findings[0].target.status.state, 'satisfied');
  assert.is(r.findings[1].target.status.state, 'not-satisfied');
  const { 'import-ap': _drop, ...noPlan } = doc['assessment-results'];
  assert.not.ok(validators.oscal({ 'assessment-results': noPlan }));
  assert.not.ok(validators.oscal({ 'assessment-results': { ...doc['assessment-results'], uuid: 'not-a-uuid' } }));
});

test('every CSV row validates against the published row schema', async () => {
  const rows = parseCsv(await exported('csv'));
  assert.is(rows.length, 4);
  for (const row of rows) assert.ok(validators.csv(row), errors(validators.csv));
  assert.is(rows[0]!.governed, 'true');
});

test('an empty window, odd titles and a broken chain still give valid documents', () => {
  const x: ExportInput = {
    rows: [{ task_id: 'x1', title: 'Quote " and, comma\nnewline', role: 'qa', status: 'done', created_at: '2026-01-02T00:00:00.000Z', completed_at: '2026-01-02T00:00:00.000Z', session_id: null, branch: null, gate_report: null, gates_passed: null, failed_gates: [], merge_commit: null, merged_at: null }],
    audit: { status: 'broken', records: 3, detail: '.sdd/audit/2026-01-02.jsonl line 4 (seq 4): hmac mismatch' }, stateCommit: null, since: '2026-01-01', until: '2026-01-03', toolVersion: '0.1.0',
  };
  for (const input of [x, { ...x, rows: [] }]) {
    assert.ok(validators.sarif(JSON.parse(renderExport('sarif', input))), errors(validators.sarif));
    assert.ok(validators.oscal(JSON.parse(renderExport('oscal', input))), errors(validators.oscal));
    for (const row of parseCsv(renderExport('csv', input))) assert.ok(validators.csv(row), errors(validators.csv));
  }
  assert.is(parseCsv(renderExport('csv', x))[0]!.title, 'Quote " and, comma\nnewline');
});

test.after(() => board.cleanup());
test.run();
