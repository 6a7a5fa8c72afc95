import type { Location } from '../admin/location.js';
import { AdminConsoleBackend } from './admin-backend.js';
import { startConsole, type ConsoleServer } from './server.js';

/** The console's port is taken: each command that serves it says which option chooses another. */
export class ConsolePortInUseError extends Error {
  override readonly name = 'ConsolePortInUseError';
  constructor(readonly port: number) {
    super(`port ${port} of the console is in use`);
  }
}

/**
 * Serves the console of a service, local or deployed, as scripts/console and scripts/start both
 * do: on 127.0.0.1, reading the service as scripts/admin does. Resolves once it listens.
 */
export async function serveConsole(
  location: Location,
  options: { readonly tenantsFile?: string | undefined; readonly port: number },
): Promise<ConsoleServer & { readonly description: string }> {
  const backend = new AdminConsoleBackend(location, { tenantsFile: options.tenantsFile });
  // Before it listens: the first view then finds the registry read, and an invalid file is said now.
  backend.readRegistry();
  const server = await startConsole({ backend, port: options.port }).catch((error: unknown) => {
    if ((error as { code?: string }).code === 'EADDRINUSE') throw new ConsolePortInUseError(options.port);
    throw error;
  });
  return { url: server.url, token: server.token, close: () => server.close(), description: backend.description };
}
