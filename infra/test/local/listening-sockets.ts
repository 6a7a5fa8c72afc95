import { readFileSync } from 'node:fs';

/** TCP state 0A is LISTEN in /proc/net/tcp and tcp6. */
const LISTEN = '0A';

/** A socket listening on a port: its local address (hex, as the kernel writes it) and its inode. */
export interface ListeningSocket {
  readonly address: string;
  readonly inode: string;
}

/** Every socket listening on `port`, from the kernel's tables (Linux): what is bound, not what was meant. */
export function listeningSockets(port: number): ListeningSocket[] {
  const portHex = port.toString(16).toUpperCase().padStart(4, '0');
  return ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((table) =>
    readFileSync(table, 'utf8')
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields[3] === LISTEN && fields[1]?.endsWith(`:${portHex}`))
      .map((fields) => ({ address: (fields[1] ?? '').split(':')[0] ?? '', inode: fields[9] ?? '' })),
  );
}
