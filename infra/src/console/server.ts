import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AdminError } from '../admin/errors.js';
import { ConsoleRequestError, type ConsoleBackend } from './backend.js';
import { action, type ConsoleSite, ForbiddenError, page, type PageResult } from './routes.js';
import { errorView } from './views.js';

/** The only address the console listens on: nothing beyond this machine reaches it. */
export const CONSOLE_HOST = '127.0.0.1';
/** Where the console listens unless told otherwise (scripts/start --console-port, scripts/console --port). */
export const DEFAULT_CONSOLE_PORT = 4580;

/**
 * What a page may load: its own stylesheet and nothing else (no script, no frame, no other
 * origin); forms post to the console only, and no other site may frame it.
 */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  // Not no-referrer: with it, a browser sends `Origin: null` on the console's own posts.
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
} as const;

const STYLESHEET = readFileSync(new URL('./console.css', import.meta.url));

export interface ConsoleServer {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** This run's token, which every changing request must carry. */
  readonly token: string;
  close(): Promise<void>;
}

export interface ConsoleOptions {
  readonly backend: ConsoleBackend;
  /** 0 lets the system pick. */
  readonly port: number;
  /** Where failures the console did not expect are reported (the page says only that it failed). */
  readonly logError?: (error: unknown) => void;
}

function send(response: ServerResponse, status: number, body: string | Buffer, type = 'text/html; charset=utf-8'): void {
  response.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type });
  response.end(body);
}

/** Serves the console on 127.0.0.1; resolves once it listens. */
export async function startConsole(options: ConsoleOptions): Promise<ConsoleServer> {
  const { backend } = options;
  const logError = options.logError ?? ((error: unknown) => console.error(error));
  const token = randomBytes(32).toString('base64url');
  const site: ConsoleSite = { backend, token, context: { description: backend.description, token }, allowedHosts: [] };
  const server: Server = createServer((request, response) => {
    handle(site, logError, request, response).catch((error: unknown) => {
      logError(error);
      response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, CONSOLE_HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  site.allowedHosts = [`${CONSOLE_HOST}:${port}`, `localhost:${port}`];
  return {
    url: `http://${CONSOLE_HOST}:${port}`,
    token,
    close: () =>
      new Promise((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

async function handle(
  site: ConsoleSite,
  logError: (error: unknown) => void,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const { context } = site;
  // A name that resolves to this machine on another site's behalf (DNS rebinding) does not get in.
  if (!site.allowedHosts.includes(request.headers.host ?? '')) {
    send(response, 421, errorView(context, 'Wrong host', 'The console answers only as 127.0.0.1 or localhost.'));
    return;
  }
  const url = new URL(request.url ?? '/', `http://${request.headers.host}`);
  try {
    if (request.method === 'GET' && url.pathname === '/console.css') return send(response, 200, STYLESHEET, 'text/css; charset=utf-8');
    let result: PageResult;
    if (request.method === 'GET' || request.method === 'HEAD') result = await page(site, url);
    else if (request.method === 'POST') result = await action(site, request, url);
    else result = { status: 405, body: errorView(context, 'Not allowed', `${request.method ?? ''} is not a method the console takes.`) };
    send(response, result.status, result.body);
  } catch (error) {
    if (error instanceof ForbiddenError) return send(response, 403, errorView(context, 'Refused', error.message));
    if (error instanceof ConsoleRequestError) return send(response, 400, errorView(context, 'Cannot do that', error.message));
    if (error instanceof AdminError) return send(response, 502, errorView(context, 'Cannot reach the scheduler', error.message));
    logError(error);
    send(response, 500, errorView(context, 'Failed', 'The console failed to answer; its log says why.'));
  }
}
