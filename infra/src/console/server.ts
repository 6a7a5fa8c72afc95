import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EVENT_STATE, OPEN_STATES, PUBLIC_TENANT_ID, type EventState } from '@adhoc-scheduler/shared';
import { AdminError } from '../admin/errors.js';
import { ACTIONS, parseDate, type Fields } from './actions.js';
import { ConsoleRequestError, type ConsoleBackend, type TenantSummary } from './backend.js';
import { refusalsSection } from './refusals-view.js';
import {
  confirmView,
  deadLettersView,
  errorView,
  eventsView,
  eventView,
  outcomeView,
  overviewView,
  problemNote,
  STATE_CHOICES,
  tenantsView,
  type EventsQuery,
  type PageContext,
  type StateChoice,
} from './views.js';

/** The only address the console listens on: nothing beyond this machine reaches it. */
export const CONSOLE_HOST = '127.0.0.1';
/** Where the console listens unless told otherwise (scripts/start --console-port, scripts/console --port). */
export const DEFAULT_CONSOLE_PORT = 4580;
/** A listing's page. */
const EVENTS_PAGE = 50;
/** A form's body, at most: the console's forms hold a few short fields. */
const MAX_BODY_BYTES = 16 * 1024;

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

/** A refusal of a request that did not come from the console's own pages. */
class ForbiddenError extends Error {}

function statesOf(choice: StateChoice): readonly EventState[] {
  if (choice === 'open') return OPEN_STATES;
  if (choice === 'any') return Object.values(EVENT_STATE);
  return [choice];
}

function send(response: ServerResponse, status: number, body: string | Buffer, type = 'text/html; charset=utf-8'): void {
  response.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type });
  response.end(body);
}

async function readForm(request: IncomingMessage): Promise<Fields> {
  if (!request.headers['content-type']?.startsWith('application/x-www-form-urlencoded'))
    throw new ConsoleRequestError('a change is posted as a form');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new ConsoleRequestError('the form is too large');
    chunks.push(chunk);
  }
  return Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
}

/** Serves the console on 127.0.0.1; resolves once it listens. */
export async function startConsole(options: ConsoleOptions): Promise<ConsoleServer> {
  const { backend } = options;
  const logError = options.logError ?? ((error: unknown) => console.error(error));
  const token = randomBytes(32).toString('base64url');
  const context: PageContext = { description: backend.description, token };
  let allowedHosts: readonly string[] = [];

  /** A change must come from a page of this console: its origin, and the token only its pages carry. */
  function checkChange(request: IncomingMessage, fields: Fields): void {
    const origin = request.headers.origin;
    if (origin !== undefined && !allowedHosts.some((host) => origin === `http://${host}`))
      throw new ForbiddenError(`a change from another site (${origin}) is refused`);
    const site = request.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin') throw new ForbiddenError(`a change from another site (${site}) is refused`);
    const given = Buffer.from(fields.token ?? '');
    const expected = Buffer.from(token);
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      throw new ForbiddenError("a change without this console's token is refused: reload the page and try again");
  }

  /** The tenant a view shows: the one asked for, else the first registered one beside the public tenant. */
  function chosenTenant(tenants: readonly TenantSummary[], asked: string | null): string | undefined {
    if (asked) return asked;
    return (tenants.find((tenant) => tenant.id !== PUBLIC_TENANT_ID) ?? tenants[0])?.id;
  }

  async function get(url: URL): Promise<{ status: number; body: string }> {
    const parameter = (name: string) => url.searchParams.get(name) ?? undefined;
    if (url.pathname === '/') return { status: 200, body: tenantsView(context, await backend.tenants()) };
    if (url.pathname === '/overview') {
      const tenants = await backend.tenants();
      const tenant = chosenTenant(tenants, url.searchParams.get('tenant'));
      if (tenant === undefined) return { status: 200, body: overviewView(context, tenants, undefined) };
      const [overview, refusals] = await Promise.all([backend.overview(tenant, Date.now()), backend.refusals(tenant)]);
      return { status: 200, body: overviewView(context, tenants, overview, refusalsSection(tenant, refusals)) };
    }
    if (url.pathname === '/events') {
      const tenants = await backend.tenants();
      const stateText = parameter('state') ?? 'open';
      const state = (STATE_CHOICES as readonly string[]).includes(stateText) ? (stateText as StateChoice) : 'open';
      const query: EventsQuery = {
        tenant: chosenTenant(tenants, url.searchParams.get('tenant')) ?? PUBLIC_TENANT_ID,
        label: parameter('label'),
        state,
        from: parameter('from'),
        to: parameter('to'),
        after: parameter('after'),
      };
      try {
        if (stateText !== state) throw new ConsoleRequestError(`state "${stateText}" is not one of ${STATE_CHOICES.join(', ')}`);
        const events = await backend.listEvents(query.tenant, {
          label: query.label || undefined,
          states: statesOf(state),
          from: query.from ? parseDate(query.from, 'due from') : undefined,
          to: query.to ? parseDate(query.to, 'due before') : undefined,
          limit: EVENTS_PAGE,
          after: query.after,
        });
        return { status: 200, body: eventsView(context, tenants, query, events, undefined) };
      } catch (error) {
        if (!(error instanceof ConsoleRequestError)) throw error;
        return { status: 400, body: eventsView(context, tenants, query, undefined, problemNote(error.message)) };
      }
    }
    if (url.pathname.startsWith('/events/')) {
      const id = decodeURIComponent(url.pathname.slice('/events/'.length));
      const lifecycle = await backend.eventLifecycle(id);
      if (lifecycle === undefined)
        return {
          status: 404,
          body: errorView(context, 'No such event', `No event ${id}: unknown, or ended longer ago than the retention period.`),
        };
      return { status: 200, body: eventView(context, lifecycle) };
    }
    if (url.pathname === '/dead-letters') {
      const filter = { queue: parameter('queue'), tenant: parameter('tenant'), eventId: parameter('event'), label: parameter('label') };
      try {
        return { status: 200, body: deadLettersView(context, filter, await backend.deadLetters(filter), undefined) };
      } catch (error) {
        if (!(error instanceof ConsoleRequestError)) throw error;
        return { status: 400, body: deadLettersView(context, filter, undefined, problemNote(`${error.message}.`)) };
      }
    }
    return { status: 404, body: errorView(context, 'Not found', `The console has no page ${url.pathname}.`) };
  }

  async function post(request: IncomingMessage, url: URL): Promise<{ status: number; body: string }> {
    const action = url.pathname.startsWith('/actions/') ? ACTIONS[url.pathname.slice('/actions/'.length)] : undefined;
    if (action === undefined) return { status: 404, body: errorView(context, 'Not found', `The console has no action ${url.pathname}.`) };
    const fields = await readForm(request);
    checkChange(request, fields);
    const carried = Object.fromEntries(action.fields.map((name) => [name, fields[name] ?? '']));
    if (fields.confirmed !== 'yes')
      return {
        status: 200,
        body: confirmView(
          context,
          url.pathname.slice('/actions/'.length),
          action.question(fields),
          carried,
          action.confirm(fields),
          action.back(fields),
        ),
      };
    const outcome = await action.run(backend, fields);
    return {
      status: 200,
      body: outcomeView(context, outcome.applied ? 'Done' : 'Not done', outcome.message, outcome.applied, action.back(fields)),
    };
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    // A name that resolves to this machine on another site's behalf (DNS rebinding) does not get in.
    if (!allowedHosts.includes(request.headers.host ?? '')) {
      send(response, 421, errorView(context, 'Wrong host', 'The console answers only as 127.0.0.1 or localhost.'));
      return;
    }
    const url = new URL(request.url ?? '/', `http://${request.headers.host}`);
    try {
      if (request.method === 'GET' && url.pathname === '/console.css') return send(response, 200, STYLESHEET, 'text/css; charset=utf-8');
      let result: { status: number; body: string };
      if (request.method === 'GET' || request.method === 'HEAD') result = await get(url);
      else if (request.method === 'POST') result = await post(request, url);
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

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
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
  allowedHosts = [`${CONSOLE_HOST}:${port}`, `localhost:${port}`];
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
