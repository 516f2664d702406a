// deploy/k8s: every manifest parses, is a valid object of its Kubernetes kind (the API's JSON schemas, as
// shipped by kubernetes-models; kubeconform -strict too when it is on PATH), and the pieces fit together:
// the kustomization names every file, selectors select, secrets and volumes referred to exist, and every
// object carries svc/govern: enabled.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseAllDocuments } from 'yaml';
import { PROJECT } from '../helpers/server.ts';

const DIR = join(PROJECT, 'deploy', 'k8s');
const K = suite('deploy/k8s');

interface Obj { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; spec?: any; [k: string]: any }

const yamlFiles = () => readdirSync(DIR).filter((f) => /\.ya?ml$/.test(f)).sort();
function docsOf(file: string): unknown[] {
  const docs = parseAllDocuments(readFileSync(join(DIR, file), 'utf8'));
  for (const d of docs) assert.equal(d.errors.map((e) => e.message), [], `${file} parses`);
  return docs.map((d) => d.toJS()).filter((d) => d !== null);
}
const kustomization = () => docsOf('kustomization.yaml')[0] as { kind: string; namespace: string; resources: string[] };
// What `kubectl apply -k deploy/k8s` applies: the listed resources with the kustomization's namespace set.
function rendered(): Obj[] {
  const k = kustomization();
  return k.resources.flatMap((f) => docsOf(f) as Obj[]).map((o) => (o.kind === 'Namespace' ? o : { ...o, metadata: { ...o.metadata, namespace: k.namespace } }));
}
const byKind = (objs: Obj[], kind: string, name?: string) => objs.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
// The schema error of an object, or null; kubernetes-models ships the API's schemas compiled per kind.
async function schemaProblem(o: Obj): Promise<string | null> {
  const mod = await import(`kubernetes-models/${o.apiVersion}/${o.kind}`).catch(() => null) as Record<string, new (d: unknown) => { validate(): void }> | null;
  const Model = mod?.[o.kind];
  if (!Model) return `${o.apiVersion} ${o.kind} is not a Kubernetes kind`;
  try {
    new Model(JSON.parse(JSON.stringify(o))).validate();
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}
const podSpecs = (objs: Obj[]) => objs.filter((o) => o.spec?.template?.spec).map((o) => ({ owner: o, pod: o.spec.template.spec, labels: o.spec.template.metadata?.labels ?? {} }));

K('the kustomization lists every manifest of the folder, each once, and names the namespace', () => {
  const k = kustomization();
  assert.is(k.kind, 'Kustomization');
  assert.is(k.namespace, 'svc');
  assert.equal([...k.resources].sort(), yamlFiles().filter((f) => f !== 'kustomization.yaml'));
});

K('every object is valid against the Kubernetes schema of its kind', async () => {
  const objs = rendered();
  for (const o of objs) {
    const problem = await schemaProblem(o);
    assert.is(problem, null, `${o.kind}/${o.metadata.name}: ${problem}`);
  }
  assert.equal(objs.map((o) => o.kind).sort(), ['Deployment', 'Namespace', 'PersistentVolumeClaim', 'Secret', 'Service', 'StatefulSet']);
  // The check bites: a wrong type and a missing required field are caught.
  const [worker] = byKind(objs, 'StatefulSet');
  assert.match(String(await schemaProblem({ ...worker!, spec: { ...worker!.spec, replicas: 'three' } })), 'replicas must be integer');
  assert.match(String(await schemaProblem({ ...worker!, spec: { ...worker!.spec, selector: undefined } })), 'selector');
});

K('kubeconform -strict accepts every manifest, when it is installed', () => {
  let version = '';
  try { version = execFileSync('kubeconform', ['-v'], { encoding: 'utf8' }); } catch { return; }
  assert.ok(version);
  execFileSync('kubeconform', ['-strict', '-summary', '-ignore-filename-pattern', 'kustomization', ...yamlFiles().map((f) => join(DIR, f))], { stdio: 'pipe' });
});

K('the server: one replica that never overlaps itself, its repository on a claim, a Service in front', () => {
  const objs = rendered();
  const [server] = byKind(objs, 'Deployment', 'svc');
  assert.ok(server);
  assert.is(server!.spec.replicas, 1);
  assert.is(server!.spec.strategy.type, 'Recreate', 'two servers must never share the tree');
  const pod = server!.spec.template.spec;
  const claim = pod.volumes.find((v: any) => v.persistentVolumeClaim)?.persistentVolumeClaim.claimName;
  assert.is(byKind(objs, 'PersistentVolumeClaim', claim).length, 1, 'the repository volume exists');
  const [service] = byKind(objs, 'Service', 'svc');
  const labels = server!.spec.template.metadata.labels;
  for (const [k, v] of Object.entries(service!.spec.selector)) assert.is(labels[k], v, `Service selects the server pod (${k})`);
  assert.is(service!.spec.ports[0].port, 8052);
  const url = 'http://svc:8052';
  const [worker] = byKind(objs, 'StatefulSet', 'svc-worker');
  for (const c of worker!.spec.template.spec.containers) assert.ok(c.env.some((e: any) => e.name === 'SERVICE_SERVER_URL' && e.value === url), 'workers reach the Service');
  // The Service must not also select the workers.
  const workerLabels = worker!.spec.template.metadata.labels;
  assert.not.ok(Object.entries(service!.spec.selector).every(([k, v]) => workerLabels[k] === v));
});

K('the workers: a StatefulSet whose slots come from an env var, authenticated by the cluster secret', () => {
  const objs = rendered();
  const [worker] = byKind(objs, 'StatefulSet', 'svc-worker');
  assert.ok(worker);
  const main = worker!.spec.template.spec.containers[0];
  assert.equal(main.command.slice(-2), ['svc', 'worker']);
  assert.ok(main.args.includes('--slots=$(SVC_WORKER_SLOTS)'));
  assert.ok(main.env.some((e: any) => e.name === 'SVC_WORKER_SLOTS'));
  assert.ok(worker!.spec.volumeClaimTemplates.length >= 1, 'each worker has its own clone');
  const grace = Number(/--grace-period=(\d+)/.exec(main.args.join(' '))?.[1]);
  assert.ok(worker!.spec.template.spec.terminationGracePeriodSeconds > grace, 'Kubernetes waits longer than the worker lets agents finish');
});

K('every secret a pod reads exists with that key; every selector selects its own pods', () => {
  const objs = rendered();
  for (const { owner, pod, labels } of podSpecs(objs)) {
    for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
      for (const e of c.env ?? []) {
        const ref = e.valueFrom?.secretKeyRef;
        if (!ref) continue;
        const [secret] = byKind(objs, 'Secret', ref.name);
        assert.ok(secret, `${owner.metadata.name}: Secret ${ref.name} exists`);
        assert.ok(ref.key in (secret!.stringData ?? secret!.data ?? {}), `${owner.metadata.name}: key ${ref.key}`);
      }
    }
    for (const [k, v] of Object.entries(owner.spec.selector.matchLabels)) assert.is(labels[k], v, `${owner.metadata.name} selects its pods`);
  }
});

K('every object and pod template is labelled svc/govern: enabled', () => {
  for (const o of rendered()) assert.is(o.metadata.labels?.['svc/govern'], 'enabled', `${o.kind}/${o.metadata.name}`);
  for (const { owner, labels } of podSpecs(rendered())) assert.is(labels['svc/govern'], 'enabled', `${owner.metadata.name} pods`);
});

K.run();
