// GET /sbom against the CycloneDX 1.6 JSON schema (vendored in fixtures/cyclonedx with its source), and against
// npm's own view of the installed production tree; POST /sbom commits it where `svc compliance check` looks.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type AnySchema } from 'ajv';
import addFormatsCjs from 'ajv-formats';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';
import { PROJECT, startServer, type RunningServer } from '../helpers/server.ts';

const addFormats = addFormatsCjs as unknown as (a: Ajv) => Ajv;
const schema = (f: string) => JSON.parse(readFileSync(join(PROJECT, 'fixtures', 'cyclonedx', f), 'utf8')) as AnySchema;
const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));
// The BOM schema refers to its two companions relative to its $id; IRI and IDN formats are not in ajv-formats.
ajv.addSchema(schema('spdx.SNAPSHOT.schema.json'), 'http://cyclonedx.org/schema/spdx.SNAPSHOT.schema.json');
ajv.addSchema(schema('jsf-0.82.SNAPSHOT.schema.json'), 'http://cyclonedx.org/schema/jsf-0.82.SNAPSHOT.schema.json');
ajv.addFormat('iri-reference', /^\S*$/);
ajv.addFormat('idn-email', /^[^\s@]+@[^\s@]+$/);
const validate = ajv.compile(schema('bom-1.6.SNAPSHOT.schema.json'));

const T = suite('observe: SBOM');
let repo: TempRepo;
let s: RunningServer;
T.before(async () => {
  repo = makeRepo('svc-sbom-');
  s = await startServer(repo.dir, { args: ['--no-orchestrator'] });
});
T.after(async () => { await s?.stop(); repo?.cleanup(); });

// name@version of every package `npm ls --omit=dev --all` shows for svc's own folder.
function npmProductionTree(): Set<string> {
  const out = JSON.parse(execFileSync('npm', ['ls', '--omit=dev', '--all', '--json'], { cwd: PROJECT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })) as { dependencies?: Record<string, unknown> };
  const seen = new Set<string>();
  const walk = (deps: Record<string, { version?: string; dependencies?: Record<string, unknown> }> | undefined) => {
    for (const [name, d] of Object.entries(deps ?? {})) {
      if (d.version) seen.add(`${name}@${d.version}`);
      walk(d.dependencies as never);
    }
  };
  walk(out.dependencies as never);
  return seen;
}

T('GET /sbom is a valid CycloneDX 1.6 BOM of exactly the installed production tree, with purls, licenses, hashes and the graph', async () => {
  const r = await fetch(`${s.url}/sbom`, { headers: { authorization: `Bearer ${s.token}` } });
  assert.is(r.status, 200);
  assert.match(r.headers.get('content-type')!, /^application\/vnd\.cyclonedx\+json; version=1\.6/);
  const bom = await r.json() as { specVersion: string; serialNumber: string; metadata: { component: { name: string; version: string } }; components: { name: string; version: string; purl: string; 'bom-ref': string; licenses?: unknown[]; hashes?: unknown[] }[]; dependencies: { ref: string; dependsOn: string[] }[] };
  assert.ok(validate(bom), JSON.stringify(validate.errors?.slice(0, 5), null, 1));
  assert.is(bom.specVersion, '1.6');
  assert.match(bom.serialNumber, /^urn:uuid:[0-9a-f-]{36}$/);
  const pkg = JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8')) as { name: string; version: string; dependencies: Record<string, string>; devDependencies: Record<string, string> };
  assert.equal([bom.metadata.component.name, bom.metadata.component.version], [pkg.name, pkg.version]);
  assert.equal(new Set(bom.components.map((c) => `${c.name}@${c.version}`)), npmProductionTree(), 'the same packages npm sees installed for production');
  assert.not.ok(bom.components.some((c) => c.name === 'uvu' || c.name === 'typescript'), 'development dependencies are not shipped, not listed');
  const typebox = bom.components.find((c) => c.name === '@sinclair/typebox')!;
  assert.match(typebox.purl, /^pkg:npm\/%40sinclair\/typebox@\d/);
  assert.ok(bom.components.filter((c) => c.licenses).length > bom.components.length * 0.9, 'licenses from the installed manifests');
  assert.ok(bom.components.filter((c) => c.hashes).length > bom.components.length * 0.9, 'hashes from npm\'s record of the install');
  const refs = new Set([...bom.components.map((c) => c['bom-ref']), bom.dependencies[0]!.ref]);
  assert.ok(bom.dependencies.every((d) => d.dependsOn.every((x) => refs.has(x))), 'every edge names a component');
  const rootDeps = bom.dependencies[0]!.dependsOn.map((x) => decodeURIComponent(x.replace(/^pkg:npm\//, '').replace(/@[^@]+$/, '')));
  assert.equal(rootDeps.sort(), Object.keys(pkg.dependencies).sort(), 'the root depends on exactly its declared dependencies');
});

T('POST /sbom writes it afresh to .sdd/artifacts/sbom/svc.cdx.json, committed into refs/sdd/state and audited', async () => {
  const r = await s.api('POST', '/sbom', {});
  assert.is(r.status, 200, JSON.stringify(r.body));
  assert.is(r.body.path, '.sdd/artifacts/sbom/svc.cdx.json');
  assert.ok(r.body.component_count > 50);
  await s.settled();
  const committed = JSON.parse(repo.git('show', `refs/sdd/state:.sdd/artifacts/sbom/svc.cdx.json`));
  assert.is(committed.serialNumber, r.body.serial_number);
  assert.ok(validate(committed));
  const audit = readdirSync(join(repo.dir, '.sdd', 'audit')).filter((f) => f.endsWith('.jsonl'))
    .flatMap((f) => readFileSync(join(repo.dir, '.sdd', 'audit', f), 'utf8').split('\n').filter(Boolean)).map((l) => JSON.parse(l));
  assert.ok(audit.some((a) => a.action === 'sbom.write' && a.resource_id === r.body.serial_number));
  assert.is((await s.api('POST', '/sbom', { format: 'spdx-json' })).status, 422);
});

T.run();
