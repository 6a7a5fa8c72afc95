import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ACTIONS, parseDate, type Fields } from './actions.js';
import { LIST_LIMIT } from '../admin/usage.js';
import { ConsoleRequestError, type ConsoleBackend } from './backend.js';
import { refusalsSection } from './refusals-view.js';
import { seriesDetailView, seriesListView, type SeriesListQuery } from './series-view.js';
import { tenantsView, type TenantsQuery } from './tenants-view.js';
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
  statesOfChoice,
  type EventsQuery,
  type PageContext,
  type StateChoice,
} from './views.js';

/** A listing's page (of events, or of series). */
const EVENTS_PAGE = 50;
/** Tenants to a page unless `limit` says otherwise (from 1 to scripts/admin tenant list's most). */
const TENANTS_PAGE = 50;
/** A form's body, at most: the console's forms hold a few short fields. */
const MAX_BODY_BYTES = 16 * 1024;

/** One running console: what it shows, the token its pages carry, and the host names it answers to. */
export interface ConsoleSite {
  readonly backend: ConsoleBackend;
  readonly token: string;
  readonly context: PageContext;
  /** Known once it listens: `127.0.0.1:<port>` and `localhost:<port>`. */
  allowedHosts: readonly string[];
}

/** What a route answers: its status and its page. */
export interface PageResult {
  readonly status: number;
  readonly body: string;
}

/** A refusal of a request that did not come from the console's own pages. */
export class ForbiddenError extends Error {}

/** The page a GET asks for. */
export async function page(site: ConsoleSite, url: URL): Promise<PageResult> {
  const { context } = site;
  if (url.pathname === '/') return tenantsPage(site, url);
  if (url.pathname === '/overview') return overviewPage(site, url);
  if (url.pathname === '/events') return eventsPage(site, url);
  if (url.pathname.startsWith('/events/')) return eventPage(site, decodeURIComponent(url.pathname.slice('/events/'.length)));
  if (url.pathname === '/series') return seriesListPage(site, url);
  if (url.pathname.startsWith('/series/')) return seriesPage(site, decodeURIComponent(url.pathname.slice('/series/'.length)));
  if (url.pathname === '/dead-letters') return deadLettersPage(site, url);
  return { status: 404, body: errorView(context, 'Not found', `The console has no page ${url.pathname}.`) };
}

/** A change posted from one of the console's pages: asked to confirm first, then made. */
export async function action(site: ConsoleSite, request: IncomingMessage, url: URL): Promise<PageResult> {
  const { backend, context } = site;
  const name = url.pathname.startsWith('/actions/') ? url.pathname.slice('/actions/'.length) : undefined;
  const chosen = name === undefined ? undefined : ACTIONS[name];
  if (name === undefined || chosen === undefined)
    return { status: 404, body: errorView(context, 'Not found', `The console has no action ${url.pathname}.`) };
  const fields = await readForm(request);
  checkChange(site, request, fields);
  const carried = Object.fromEntries(chosen.fields.map((field) => [field, fields[field] ?? '']));
  if (fields.confirmed !== 'yes')
    return {
      status: 200,
      body: confirmView(context, name, chosen.question(fields), carried, chosen.confirm(fields), chosen.back(fields)),
    };
  const outcome = await chosen.run(backend, fields);
  return {
    status: 200,
    body: outcomeView(context, outcome.applied ? 'Done' : 'Not done', outcome.message, outcome.applied, chosen.back(fields)),
  };
}

/** A change must come from a page of this console: its origin, and the token only its pages carry. */
function checkChange(site: ConsoleSite, request: IncomingMessage, fields: Fields): void {
  const origin = request.headers.origin;
  if (origin !== undefined && !site.allowedHosts.some((host) => origin === `http://${host}`))
    throw new ForbiddenError(`a change from another site (${origin}) is refused`);
  const fetchSite = request.headers['sec-fetch-site'];
  if (fetchSite !== undefined && fetchSite !== 'same-origin')
    throw new ForbiddenError(`a change from another site (${fetchSite}) is refused`);
  const given = Buffer.from(fields.token ?? '');
  const expected = Buffer.from(site.token);
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw new ForbiddenError("a change without this console's token is refused: reload the page and try again");
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

/** The tenant a view shows: the one asked for, else the backend's default (the first registered beside the public tenant). */
async function chosenTenant(backend: ConsoleBackend, url: URL): Promise<string> {
  return url.searchParams.get('tenant') || backend.defaultTenant();
}

async function tenantsPage({ backend, context }: ConsoleSite, url: URL): Promise<PageResult> {
  // An empty field of the search form is no filter.
  const parameter = (name: string) => url.searchParams.get(name) || undefined;
  const query: TenantsQuery = {
    prefix: parameter('prefix'),
    account: parameter('account'),
    after: parameter('after'),
    limit: parameter('limit'),
  };
  const limit = query.limit === undefined ? TENANTS_PAGE : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > LIST_LIMIT.max) {
    const problem = problemNote(`limit "${query.limit ?? ''}" is not a whole number from 1 to ${LIST_LIMIT.max}`);
    return { status: 400, body: tenantsView(context, query, undefined, problem) };
  }
  const listed = await backend.tenants({ prefix: query.prefix, account: query.account, after: query.after, limit });
  return { status: 200, body: tenantsView(context, query, listed, undefined) };
}

async function overviewPage({ backend, context }: ConsoleSite, url: URL): Promise<PageResult> {
  const tenant = await chosenTenant(backend, url);
  const [overview, refusals] = await Promise.all([backend.overview(tenant, Date.now()), backend.refusals(tenant)]);
  return { status: 200, body: overviewView(context, overview, refusalsSection(tenant, refusals)) };
}

async function eventsPage({ backend, context }: ConsoleSite, url: URL): Promise<PageResult> {
  const parameter = (name: string) => url.searchParams.get(name) ?? undefined;
  const stateText = parameter('state') ?? 'open';
  const state = (STATE_CHOICES as readonly string[]).includes(stateText) ? (stateText as StateChoice) : 'open';
  const query: EventsQuery = {
    tenant: await chosenTenant(backend, url),
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
      states: statesOfChoice(state),
      from: query.from ? parseDate(query.from, 'due from') : undefined,
      to: query.to ? parseDate(query.to, 'due before') : undefined,
      limit: EVENTS_PAGE,
      after: query.after,
    });
    return { status: 200, body: eventsView(context, query, events, undefined) };
  } catch (error) {
    if (!(error instanceof ConsoleRequestError)) throw error;
    return { status: 400, body: eventsView(context, query, undefined, problemNote(error.message)) };
  }
}

async function eventPage({ backend, context }: ConsoleSite, id: string): Promise<PageResult> {
  const lifecycle = await backend.eventLifecycle(id);
  if (lifecycle === undefined)
    return {
      status: 404,
      body: errorView(context, 'No such event', `No event ${id}: unknown, or ended longer ago than the retention period.`),
    };
  return { status: 200, body: eventView(context, lifecycle) };
}

async function seriesListPage({ backend, context }: ConsoleSite, url: URL): Promise<PageResult> {
  const query: SeriesListQuery = {
    tenant: await chosenTenant(backend, url),
    label: url.searchParams.get('label') ?? undefined,
    after: url.searchParams.get('after') ?? undefined,
  };
  const now = Date.now();
  try {
    const listed = await backend.listSeries(query.tenant, { label: query.label || undefined, limit: EVENTS_PAGE, after: query.after });
    return { status: 200, body: seriesListView(context, query, listed, undefined, now) };
  } catch (error) {
    if (!(error instanceof ConsoleRequestError)) throw error;
    return { status: 400, body: seriesListView(context, query, undefined, problemNote(error.message), now) };
  }
}

async function seriesPage({ backend, context }: ConsoleSite, id: string): Promise<PageResult> {
  const now = Date.now();
  const detail = await backend.seriesDetail(id, now);
  if (detail === undefined)
    return {
      status: 404,
      body: errorView(context, 'No such series', `No series ${id}: unknown, or ended longer ago than the retention period.`),
    };
  return { status: 200, body: seriesDetailView(context, detail, now) };
}

async function deadLettersPage({ backend, context }: ConsoleSite, url: URL): Promise<PageResult> {
  const parameter = (name: string) => url.searchParams.get(name) ?? undefined;
  const filter = { queue: parameter('queue'), tenant: parameter('tenant'), eventId: parameter('event'), label: parameter('label') };
  try {
    return { status: 200, body: deadLettersView(context, filter, await backend.deadLetters(filter), undefined) };
  } catch (error) {
    if (!(error instanceof ConsoleRequestError)) throw error;
    return { status: 400, body: deadLettersView(context, filter, undefined, problemNote(`${error.message}.`)) };
  }
}
