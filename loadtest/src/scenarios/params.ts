/** The knobs of a scenario, after the CLI applied the scenario's defaults. */
export interface ScenarioParams {
  /** Events whose delivery is measured (or published, for ingest; the noisy tenant's, for fairness; its control requests, for neighbour). */
  readonly events: number;
  /** fairness: the quiet tenant's events, due in the same second as the noisy tenant's; neighbour: due over `seconds` while the noisy tenant floods. */
  readonly quietEvents: number;
  /** Span over which the events are due. */
  readonly seconds: number;
  /** steady, neighbour: how long before its due time each event is published; hotspot, fairness: how far ahead the due second is. */
  readonly aheadSeconds: number;
  /** Near-path window the service runs with (far, backlog, ingest). */
  readonly windowSeconds: number;
  readonly loaderIntervalSeconds: number;
  /** Open events written straight to the table (backlog). */
  readonly backlog: number;
  /** ingest: which path the accepted events take. */
  readonly path: 'near' | 'far';
  /** chaos: events due within the same second, on top of the steady load. */
  readonly spikeEvents: number;
  /** chaos: kill -9 and restarts of the service. */
  readonly kills: number;
  /** chaos: probability that a call of the service's SNS, SQS or DynamoDB client fails. */
  readonly faultRate: number;
  /** chaos: seeds the kill moments and the fault decisions. */
  readonly seed: number;
}
