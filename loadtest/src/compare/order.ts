/** The two trees a comparison measures: `base` at the ref given, `head` the current checkout. */
export type Side = 'base' | 'head';

/**
 * The order of the runs: pairs alternately base first and head first (ABBA…), so that a drift
 * of the machine over the comparison (warming, another job starting) weighs on both sides alike.
 */
export function runOrder(runsPerSide: number): Side[] {
  const order: Side[] = [];
  for (let pair = 0; pair < runsPerSide; pair++)
    order.push(...(pair % 2 === 0 ? (['base', 'head'] as const) : (['head', 'base'] as const)));
  return order;
}
