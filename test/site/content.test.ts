import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { buildIndex, excerptOf, loadPosts, parsePost, sectionsOf, type Post } from '../../src/site/index.ts';
import { makeTempDir } from '../helpers/repo.ts';
import { POSTS } from '../helpers/site.ts';

const C = suite('site content');
const post = (file: string, text: string) => parsePost(file, text) as Post;

C('front matter gives slug, title and draft; the file name and first heading are the fallbacks', () => {
  const p = post('worktrees.md', POSTS['worktrees.md']!);
  assert.equal([p.slug, p.title, p.draft, p.url], ['git-worktrees', 'Agents in git worktrees', false, '/blog/git-worktrees']);
  assert.is(p.hash.length, 64);
  const bare = post('plain-notes.md', '# Plain notes\n\nNo front matter at all.\n');
  assert.equal([bare.slug, bare.title, bare.draft], ['plain-notes', 'Plain notes', false]);
  assert.ok(post('d.md', '---\nslug: d\ndraft: true\n---\nx').draft);
  assert.is(post('u.md', '---\nslug: u\nurl: /notes/u\n---\nx').url, '/notes/u');
});

C('a changed body changes the hash (the summary cache key); the front matter does not', () => {
  const a = post('a.md', '---\nslug: a\ntitle: One\n---\nBody');
  const b = post('a.md', '---\nslug: a\ntitle: Two\n---\nBody');
  const c = post('a.md', '---\nslug: a\ntitle: One\n---\nBody, edited');
  assert.is(a.hash, b.hash);
  assert.is.not(a.hash, c.hash);
});

C('bad slugs and bad YAML are skipped with a reason', () => {
  assert.match((parsePost('x.md', '---\nslug: Not Kebab\n---\n') as { skip: string }).skip, /kebab-case/);
  assert.match((parsePost('x.md', '---\nslug: [unclosed\n---\n') as { skip: string }).skip, /not valid YAML/);
});

C('sections are cut at ## and ### headings, with anchors in their URLs', () => {
  const s = sectionsOf(post('worktrees.md', POSTS['worktrees.md']!));
  assert.equal(s.map((x) => x.heading), ['', 'Why worktrees', 'Merging']);
  assert.is(s[1]!.url, '/blog/git-worktrees#why-worktrees');
  assert.match(s[1]!.text, /private checkout/);
});

C('loadPosts reads nested folders, reports skipped files and duplicate slugs', async () => {
  const tmp = makeTempDir('svc-content-');
  try {
    mkdirSync(join(tmp.dir, 'nested'));
    writeFileSync(join(tmp.dir, 'a.md'), '---\nslug: same\n---\nfirst');
    writeFileSync(join(tmp.dir, 'nested', 'b.md'), '---\nslug: same\n---\nsecond');
    writeFileSync(join(tmp.dir, 'nested', 'c.mdx'), '---\nslug: other\n---\nthird');
    writeFileSync(join(tmp.dir, 'notes.txt'), 'not markdown');
    const { posts, skipped } = await loadPosts(tmp.dir);
    assert.equal(posts.map((p) => p.slug), ['same', 'other']);
    assert.equal(skipped.length, 1);
    assert.match(skipped[0]!, /already used/);
  } finally {
    tmp.cleanup();
  }
});

C('the index finds sections by words of the body, title and headings; drafts are never retrieved', () => {
  const posts = Object.entries(POSTS).map(([f, t]) => post(f, t));
  const index = buildIndex(posts);
  const hits = index.search('how do agents avoid clobbering each other');
  assert.ok(hits.length >= 1);
  assert.is(hits[0]!.slug, 'git-worktrees');
  assert.is(hits[0]!.n, 1);
  assert.match(hits[0]!.url, /^\/blog\/git-worktrees/);
  assert.equal(index.search('trusted proxies forwarding')[0]?.slug, 'rate-limits');
  assert.equal(index.search('quantum scheduler roadmap'), [], 'the draft is not indexed');
  assert.equal(buildIndex([]).size, 0);
});

C('one hit per article, at most `limit`', () => {
  const posts = Object.entries(POSTS).map(([f, t]) => post(f, t));
  const hits = buildIndex(posts).search('agent worktree merged branch window proxies', 10);
  assert.equal(new Set(hits.map((h) => h.slug)).size, hits.length);
  assert.equal(buildIndex(posts).search('agent proxies', 1).length, 1);
});

C('excerpts are about 400 characters around the first matching term', () => {
  const long = `${'filler '.repeat(200)}the needle is here ${'tail '.repeat(200)}`;
  const e = excerptOf(long, ['needle']);
  assert.ok(e.length <= 402, `length ${e.length}`);
  assert.match(e, /needle/);
  assert.ok(e.startsWith('…') && e.endsWith('…'));
  assert.is(excerptOf('short text', ['x']), 'short text');
});

C.run();
