/** The check of a plant body, shared by the create and the change: every failing field named. */
import * as v from 'valibot';
import { errorCodes } from '../errors/error-codes.ts';
import { ApiError } from '../errors/errors.ts';

/**
 * A parsed body as `schema` reads it, its `id` (if sent) the path's `pathId` where given.
 * @throws ApiError 40002 naming every failing field (never its value) in `requirements`' order
 */
export function checkPlantBody<Schema extends v.GenericSchema>(
  schema: Schema,
  requirements: Readonly<Record<string, string>>,
  body: unknown,
  pathId?: bigint,
): v.InferOutput<Schema> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError(errorCodes.invalidPlant, 'Invalid plant: the body must be a JSON object.');
  }
  const result = v.safeParse(schema, body);
  const missing = new Set<unknown>();
  const invalid = new Set<unknown>();
  for (const issue of result.issues ?? []) {
    (issue.input === undefined ? missing : invalid).add(issue.path?.[0]?.key);
  }
  const sentId = (body as { id?: unknown }).id;
  if (pathId !== undefined && typeof sentId === 'bigint' && sentId !== pathId) invalid.add('id');
  if (result.success && invalid.size === 0) return result.output;
  const failures = Object.entries(requirements)
    .filter(([field]) => missing.has(field) || invalid.has(field))
    .map(([field, requirement]) =>
      missing.has(field)
        ? `${field} is required and must be ${requirement}`
        : `${field} must be ${requirement}`,
    );
  throw new ApiError(errorCodes.invalidPlant, `Invalid plant: ${failures.join('; ')}.`);
}
