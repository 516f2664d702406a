import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';

/** One installed package. */
export interface InstalledPackage {
  name: string;
  version: string;
  license: string | null;
  description: string | null;
  /** `sha512-<base64>` from npm's record of the install (node_modules/.package-lock.json), when there is one. */
  integrity: string | null;
  /** bom-refs of the installed packages it depends on. */
  deps: string[];
}

/** The installed dependency tree of a package: itself and every package its runtime dependencies pull in. */
export interface InstalledTree {
  root: InstalledPackage;
  packages: InstalledPackage[];
}

interface Manifest { name?: string; version?: string; license?: unknown; licenses?: unknown; description?: string; dependencies?: Record<string, string>; optionalDependencies?: Record<string, string>; peerDependencies?: Record<string, string> }

/** `pkg:npm/…` of a package (the scope's `@` percent-encoded, as the purl spec asks) (pure). */
export function purl(name: string, version: string): string {
  const [scope, bare] = name.startsWith('@') ? [name.slice(0, name.indexOf('/')), name.slice(name.indexOf('/') + 1)] : [null, name];
  return `pkg:npm/${scope ? `${encodeURIComponent(scope)}/` : ''}${encodeURIComponent(bare)}@${encodeURIComponent(version)}`;
}

// Node's lookup: node_modules/<name> in the package's folder, then in every folder above it.
function resolveDep(fromDir: string, name: string): string | null {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const cand = join(dir, 'node_modules', name);
    if (existsSync(join(cand, 'package.json'))) return cand;
    if (dirname(dir) === dir) return null;
  }
}

const readManifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;

// SPDX expression of a manifest's license field (old packages list `licenses: [{type}]`).
function licenseOf(m: Manifest): string | null {
  if (typeof m.license === 'string' && m.license.trim()) return m.license.trim();
  const list = Array.isArray(m.licenses) ? m.licenses : m.license && typeof m.license === 'object' ? [m.license] : [];
  const types = list.map((l) => (typeof l === 'string' ? l : (l as { type?: unknown })?.type)).filter((t): t is string => typeof t === 'string');
  return types.length ? (types.length > 1 ? `(${types.join(' OR ')})` : types[0]!) : null;
}

// Integrity of installed packages, from npm's hidden lockfiles (`<x>/node_modules/.package-lock.json`), keyed by folder.
function integrityLookup(): (dir: string) => string | null {
  const lockfiles = new Map<string, Record<string, { integrity?: string }> | null>();
  return (dir) => {
    const at = dir.lastIndexOf(`${sep}node_modules${sep}`);
    if (at < 0) return null;
    const base = dir.slice(0, at);
    if (!lockfiles.has(base)) {
      try {
        lockfiles.set(base, (JSON.parse(readFileSync(join(base, 'node_modules', '.package-lock.json'), 'utf8')) as { packages?: Record<string, { integrity?: string }> }).packages ?? null);
      } catch {
        lockfiles.set(base, null);
      }
    }
    return lockfiles.get(base)?.[relative(base, dir).split(sep).join('/')]?.integrity ?? null;
  };
}

/** Walk the runtime dependencies installed under `packageRoot` (dependencies, and optional or peer ones that are installed). */
export function readInstalledTree(packageRoot: string): InstalledTree {
  const integrity = integrityLookup();
  const byDir = new Map<string, InstalledPackage>();
  const byRef = new Map<string, InstalledPackage>();
  const visit = (dir: string, isRoot: boolean): InstalledPackage => {
    const seen = byDir.get(dir);
    if (seen) return seen;
    const m = readManifest(dir);
    const p: InstalledPackage = { name: m.name ?? dir, version: m.version ?? '0.0.0', license: licenseOf(m), description: m.description ?? null, integrity: isRoot ? null : integrity(dir), deps: [] };
    byDir.set(dir, p);
    const names = new Set([...Object.keys(m.dependencies ?? {}), ...Object.keys(m.optionalDependencies ?? {}), ...Object.keys(m.peerDependencies ?? {})]);
    for (const name of [...names].sort()) {
      const depDir = resolveDep(dir, name);
      // A missing optional or peer dependency is simply not installed.
      if (!depDir) continue;
      const d = visit(depDir, false);
      p.deps.push(purl(d.name, d.version));
    }
    p.deps = [...new Set(p.deps)];
    if (!isRoot) byRef.set(purl(p.name, p.version), byRef.get(purl(p.name, p.version)) ?? p);
    return p;
  };
  const root = visit(packageRoot, true);
  return { root, packages: [...byRef.values()].sort((a, b) => (purl(a.name, a.version) < purl(b.name, b.version) ? -1 : 1)) };
}

const HASH_ALGS: Record<string, string> = { sha512: 'SHA-512', sha384: 'SHA-384', sha256: 'SHA-256', sha1: 'SHA-1' };

// `sha512-<base64>` → a CycloneDX hash.
function hashOf(integrity: string | null): { alg: string; content: string }[] {
  const m = /^(sha\d+)-([A-Za-z0-9+/=]+)$/.exec(integrity?.split(/\s+/)[0] ?? '');
  const alg = m ? HASH_ALGS[m[1]!] : undefined;
  return m && alg ? [{ alg, content: Buffer.from(m[2]!, 'base64').toString('hex') }] : [];
}

function component(p: InstalledPackage, type: 'library' | 'application') {
  const ref = purl(p.name, p.version);
  const hashes = hashOf(p.integrity);
  return {
    type, 'bom-ref': ref, name: p.name, version: p.version, purl: ref,
    ...(p.description ? { description: p.description.slice(0, 1000) } : {}),
    ...(p.license ? { licenses: [{ expression: p.license }] } : {}),
    ...(hashes.length ? { hashes } : {}),
  };
}

/** A CycloneDX 1.6 JSON BOM of the tree (pure: serial number and time are given). */
export function cycloneDx(tree: InstalledTree, o: { serial: string; timestamp: string; toolVersion: string }) {
  const root = component(tree.root, 'application');
  return {
    $schema: 'http://cyclonedx.org/schema/bom-1.6.schema.json',
    bomFormat: 'CycloneDX', specVersion: '1.6', serialNumber: `urn:uuid:${o.serial}`, version: 1,
    metadata: {
      timestamp: o.timestamp,
      tools: { components: [{ type: 'application', name: 'svc', version: o.toolVersion, description: 'GET /sbom: the installed dependency tree' }] },
      component: root,
    },
    components: tree.packages.map((p) => component(p, 'library')),
    dependencies: [tree.root, ...tree.packages].map((p) => ({ ref: purl(p.name, p.version), dependsOn: p.deps })),
  };
}
