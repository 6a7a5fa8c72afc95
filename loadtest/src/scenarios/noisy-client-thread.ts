import { parentPort, workerData } from 'node:worker_threads';
import { runNoisyClient, type NoisyClientInput } from './noisy-client.js';

/** The noisy tenant's client in its own thread (see startNoisyClientThread). */
let quietFinishedAt: number | undefined;
parentPort?.on('message', (message: { readonly quietFinishedAt: number }) => {
  quietFinishedAt = message.quietFinishedAt;
});
const result = await runNoisyClient(workerData as NoisyClientInput, () => quietFinishedAt);
parentPort?.postMessage(result);
parentPort?.close();
