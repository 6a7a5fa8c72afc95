import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Where the head keeps DynamoDB Local (scripts/bootstrap.sh puts it there); each tree looks for it at the same place. */
const DYNAMODB_LOCAL = join('.local', 'dynamodb-local');

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** The commit a ref names, in full. */
export function resolveCommit(repo: string, ref: string): string {
  try {
    return git(repo, 'rev-parse', '--verify', '--quiet', `${ref}^{commit}`);
  } catch {
    throw new Error(`--base ${ref} names no commit of this repository`);
  }
}

/** The commit's date, ISO 8601. */
export function commitDate(repo: string, commit: string): string {
  return git(repo, 'log', '-1', '--format=%cI', commit);
}

/** Runs a step quietly; should it fail, its output is in the error. */
function run(cwd: string, command: string, args: readonly string[]): void {
  execFileSync(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * The base's tree, ready to start: a worktree detached at `commit` under the head's
 * .local/compare (git-ignored), kept for the next comparison; its dependencies installed from
 * the store (offline where it has them all), and the head's DynamoDB Local linked in, so that
 * nothing is downloaded twice.
 */
export function prepareBaseTree(headRoot: string, commit: string, note: (line: string) => void): string {
  const tree = join(headRoot, '.local', 'compare', commit);
  if (existsSync(join(tree, '.git'))) {
    const checkedOut = git(tree, 'rev-parse', 'HEAD');
    if (checkedOut !== commit) throw new Error(`${tree} has ${checkedOut} checked out, not ${commit}; remove it (git worktree remove)`);
    note(`base: reusing ${tree}`);
  } else {
    note(`base: checking ${commit.slice(0, 7)} out in ${tree}`);
    mkdirSync(dirname(tree), { recursive: true });
    // A worktree whose folder was deleted is still registered, and would refuse the path.
    git(headRoot, 'worktree', 'prune');
    git(headRoot, 'worktree', 'add', '--detach', tree, commit);
  }
  if (!existsSync(join(tree, 'node_modules', '.modules.yaml'))) {
    note('base: installing its dependencies');
    try {
      run(tree, 'pnpm', ['install', '--frozen-lockfile', '--offline']);
    } catch {
      note('base: the store lacks some packages; installing online');
      run(tree, 'pnpm', ['install', '--frozen-lockfile']);
    }
  }
  const headDynamodb = join(headRoot, DYNAMODB_LOCAL);
  if (!existsSync(join(headDynamodb, 'DynamoDBLocal.jar')))
    throw new Error(`no DynamoDB Local in ${headDynamodb}; run scripts/bootstrap.sh`);
  const baseDynamodb = join(tree, DYNAMODB_LOCAL);
  if (!existsSync(baseDynamodb)) {
    mkdirSync(dirname(baseDynamodb), { recursive: true });
    symlinkSync(headDynamodb, baseDynamodb);
  }
  return tree;
}
