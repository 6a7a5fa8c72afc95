import type { TenantsPage, TenantSummary } from './backend.js';
import { html, type Html } from './html.js';
import { actionForm, count, page, type PageContext, pauseText, quotaUse } from './views.js';

/** The tenants view's search, as its URL gives it: by id prefix, by account, after a tenant, so many to a page. */
export interface TenantsQuery {
  readonly prefix: string | undefined;
  readonly account: string | undefined;
  readonly after: string | undefined;
  /** The page size as given; the default when undefined. */
  readonly limit: string | undefined;
}

/** The URL of a page of the tenants view, as bookmarked. */
export function tenantsUrl(query: Partial<TenantsQuery>): string {
  const parameters = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') parameters.set(name, value);
  const search = parameters.toString();
  return search === '' ? '/' : `/?${search}`;
}

function tenantRow(context: PageContext, tenant: TenantSummary): Html {
  const id = encodeURIComponent(tenant.id);
  return html`<tr>
<th scope="row"><a href="/overview?tenant=${id}">${tenant.id}</a>${tenant.enabled ? '' : ' (disabled)'}</th>
<td>${quotaUse(tenant)}</td>
<td>${count(tenant.maxIngestPerSecond)}</td>
<td>${count(tenant.maxControlPerSecond)}</td>
<td>${pauseText(tenant)}</td>
<td><a href="/events?tenant=${id}">Events</a> <a href="/series?tenant=${id}">Series</a></td>
<td>${[
    // Both while the pause state is not known (its counter item could not be read).
    tenant.pause.paused !== true &&
      actionForm(context, 'pause', { tenant: tenant.id }, `Pause ${tenant.id}…`, html`<label>Note <input name="note" size="12"></label> `),
    tenant.pause.paused !== false && actionForm(context, 'resume', { tenant: tenant.id }, `Resume ${tenant.id}…`),
  ]}</td>
</tr>`;
}

/** The listing of a page of tenants, with the links to the next page and back to the first. */
function tenantsListing(context: PageContext, query: TenantsQuery, listed: TenantsPage): Html {
  const search = { prefix: query.prefix, account: query.account, limit: query.limit };
  const first = query.after === undefined ? '' : html`<a href="${tenantsUrl(search)}">First page</a> `;
  const next = listed.next === undefined ? '' : html`<a href="${tenantsUrl({ ...search, after: listed.next })}" rel="next">Next page</a>`;
  const links = first === '' && next === '' ? '' : html`<p>${first}${next}</p>`;
  if (listed.tenants.length === 0) return html`<p role="status">No tenant matches.</p>${links}`;
  return html`<table>
<caption>Registered tenants, their open events against their quota, and whether they are paused</caption>
<thead><tr><th scope="col">Tenant</th><th scope="col">Open events (quota use)</th><th scope="col">Max new events/s</th><th scope="col">Max control requests/s</th><th scope="col">Paused</th><th scope="col">Events and series</th><th scope="col">Pause or resume</th></tr></thead>
<tbody>${listed.tenants.map((tenant) => tenantRow(context, tenant))}</tbody>
</table>
${links}`;
}

/** The first view: a page of the registry's tenants, the public one first, then by id, searched by id prefix or account. */
export function tenantsView(context: PageContext, query: TenantsQuery, listed: TenantsPage | undefined, problem: Html | undefined): string {
  const search = html`<form method="get" action="/" class="filters" role="search">
<label>Id starts with <input name="prefix" value="${query.prefix ?? ''}" size="16"></label>
<label>Account <input name="account" value="${query.account ?? ''}" size="14" inputmode="numeric"></label>
${query.limit === undefined ? '' : html`<input type="hidden" name="limit" value="${query.limit}">`}
<button type="submit">Search</button>
</form>`;
  const listing = problem ?? (listed === undefined ? html`` : tenantsListing(context, query, listed));
  return page(context, '/', 'Tenants', html`${search}${listing}`);
}
