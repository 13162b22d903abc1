// A page on another origin than the API's that uses @plant-store/client: it lists every plant
// (exact 19-digit ids as bigint) and lets you rename one. `plant-store-client.js` is the client
// bundled for browsers: `npx esbuild clients/typescript/src/index.ts --bundle --format=esm
// --platform=browser --outfile=clients/typescript/examples/browser/plant-store-client.js`.
import { PlantStoreClient, PlantStoreError } from './plant-store-client.js';

const parameters = new URLSearchParams(location.search);
const client = new PlantStoreClient({
  baseUrl: parameters.get('api') ?? 'http://127.0.0.1:3000',
  token: parameters.get('token') ?? '',
});
const list = document.querySelector('#plants');
const status = document.querySelector('#status');

/** Shows every plant, page by page. */
async function showPlants() {
  list.replaceChildren();
  for await (const plant of client.list({ limit: 50 })) {
    const item = document.createElement('li');
    item.dataset.id = String(plant.id);
    item.textContent = `${plant.id}: ${plant.name}${plant.tag === undefined ? '' : ` (${plant.tag})`}`;
    list.append(item);
  }
}

/** Renames a plant, if nobody changed it since this page read it. */
async function rename(id, name) {
  try {
    await client.patch(id, { name });
    status.textContent = `Renamed ${id}.`;
  } catch (error) {
    status.textContent =
      error instanceof PlantStoreError
        ? `${error.message} (${error.status}/${error.error}, request ${error.requestId})`
        : String(error);
    throw error;
  }
  await showPlants();
}

// For the console, and the browser test.
window.plantStore = { client, PlantStoreError, showPlants, rename };
showPlants().catch((error) => {
  status.textContent = error instanceof PlantStoreError ? error.message : String(error);
});
