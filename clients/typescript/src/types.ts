/**
 * The API's shapes as the client hands them to you: the schemas of `openapi.yaml`, with every id
 * a `bigint`. `schemaProperties` names each schema's members; `npm test` holds them to the
 * document, so a field added there and not here fails a test.
 */

/** A plant to add (`NewPlant`). */
export interface NewPlant {
  readonly id: bigint;
  readonly name: string;
  readonly tag?: string;
}

/** What a create answers (`Plant`): the stored fields without the id. */
export interface Plant {
  readonly name: string;
  readonly tag?: string;
}

/** A stored plant (`StoredPlant`). */
export interface StoredPlant {
  readonly id: bigint;
  readonly name: string;
  readonly tag?: string;
}

/** A replacement of a plant's fields (`PlantReplacement`, the body of `PUT`). */
export interface PlantReplacement {
  readonly name: string;
  readonly tag?: string;
}

/** A JSON merge patch of a plant (`PlantPatch`): `tag: null` removes the tag. */
export interface PlantPatch {
  readonly name?: string;
  readonly tag?: string | null;
}

/** A plant as events carry it (`VersionedPlant`). */
export interface VersionedPlant extends StoredPlant {
  readonly version: number;
}

/** A webhook in the `event` format. */
export type PlantEvent =
  | {
      readonly type: 'plant.created' | 'plant.updated';
      readonly timestamp: string;
      readonly data: VersionedPlant;
    }
  | {
      readonly type: 'plant.deleted';
      readonly timestamp: string;
      readonly data: { readonly id: bigint; readonly version: number };
    };

/** Every failure's body (`Error`). */
export interface ErrorBody {
  readonly error: number;
  readonly message: string;
}

/** The members of each schema, as `openapi.yaml` declares them. */
export const schemaProperties = {
  NewPlant: ['id', 'name', 'tag'],
  Plant: ['name', 'tag'],
  StoredPlant: ['id', 'name', 'tag'],
  PlantReplacement: ['id', 'name', 'tag'],
  PlantPatch: ['id', 'name', 'tag'],
  VersionedPlant: ['id', 'name', 'tag', 'version'],
  PlantChangedEvent: ['type', 'timestamp', 'data'],
  PlantDeletedEvent: ['type', 'timestamp', 'data'],
  Error: ['error', 'message'],
} as const;

/** Which client method calls each operation of `openapi.yaml`. */
export const operationMethods = {
  createPlant: 'create',
  listPlants: 'list',
  getPlant: 'get',
  replacePlant: 'update',
  patchPlant: 'patch',
  deletePlant: 'delete',
} as const;
