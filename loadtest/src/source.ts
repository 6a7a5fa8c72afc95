import { execFileSync } from 'node:child_process';

/** The code a run measured: its commit, and whether the tree held changes beyond it. */
export interface SourceVersion {
  readonly commit: string;
  readonly uncommittedChanges: boolean;
}

/** The commit checked out in `dir`, and whether tracked files differ from it; undefined outside a git checkout. */
export function sourceVersion(dir: string): SourceVersion | undefined {
  try {
    const git = (...args: string[]): string =>
      execFileSync('git', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return { commit: git('rev-parse', 'HEAD'), uncommittedChanges: git('status', '--porcelain', '--untracked-files=no') !== '' };
  } catch {
    return undefined;
  }
}
