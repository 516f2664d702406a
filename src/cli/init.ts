import { resolve } from 'node:path';
import { command } from './command.ts';
import { checkWorkTree, excludeSdd, initSdd, restoredWords } from './workspace.ts';

/** `svc init`: create `.sdd/` from the template and keep it out of the user's commits. */
export const initCommand = command({ name: 'init', description: 'Create .sdd/ from the template in a git repository' }, {}, ({ values, out }) => {
  const { root, gitCommonDir } = checkWorkTree(resolve(String(values.workdir ?? process.cwd())));
  const { fresh, restored } = initSdd(root, { board: true });
  excludeSdd(gitCommonDir);
  out(fresh ? `created ${root}/.sdd` : `${root}/.sdd already exists; missing template files added`);
  if (restored?.paths.length) out(`restored ${restoredWords(restored)} from refs/sdd/state`);
});
