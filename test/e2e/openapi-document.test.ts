import { describe, expect, it } from '@jest/globals';
import { newPlantSchema, parseNewPlant } from '../../functions/create-plant/new-plant.ts';
import { errorCodes } from '../../functions/shared/error-codes.ts';
import { int64Max, int64Min } from '../../functions/shared/int64-json.ts';
import { gatewayResponses } from '../../infra/gateway-responses.ts';
import {
  createPlantOperation,
  documentedResponse,
  openApiDocument,
  openApiText,
  type ResponseObject,
  schemaValidator,
} from './openapi.ts';

const codes = Object.values(errorCodes);

/** Every example of every documented response, with its status. */
const responseExamples = Object.keys(createPlantOperation.responses).flatMap((status) => {
  const response = documentedResponse(Number(status)) as ResponseObject;
  const examples = response.content['application/json'].examples ?? {};
  return Object.entries(examples).map(([name, example]) => ({
    status: Number(status),
    name,
    value: example.value as { error: number; message: string },
  }));
});
const errorExamples = responseExamples.filter((example) => example.status !== 200);

function messageOfInvalidPlant(body: unknown): string {
  try {
    parseNewPlant(body);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected an invalid plant');
}

describe('openapi.yaml', () => {
  it('is an OpenAPI 3.1.0 document', () => {
    expect(openApiDocument.openapi).toBe('3.1.0');
  });

  describe('agrees with the error-code table', () => {
    it('lists exactly the codes of errorCodes in the Error schema', () => {
      const documented = openApiDocument.components.schemas.Error?.properties?.error?.enum;
      expect([...(documented as number[])].sort()).toEqual(codes.map((code) => code.error).sort());
    });

    it('documents 200 and every status an error code answers, nothing else', () => {
      const statuses = new Set([200, ...codes.map((code) => code.statusCode)]);
      expect(Object.keys(createPlantOperation.responses).map(Number).sort()).toEqual(
        [...statuses].sort(),
      );
    });

    it.each(codes)('has an example of $error under status $statusCode', (code) => {
      const example = errorExamples.find((candidate) => candidate.value.error === code.error);
      expect(example?.status).toBe(code.statusCode);
    });

    it.each(errorExamples)(
      "example $name ($status) is a valid Error with its code's message",
      ({ status, value }) => {
        expect(schemaValidator('Error')(value)).toBe(true);
        const code = codes.find((candidate) => candidate.error === value.error);
        expect(code?.statusCode).toBe(status);
        // 40002's message names the failing fields: the example is the real one for a missing name.
        const message =
          value.error === errorCodes.invalidPlant.error
            ? messageOfInvalidPlant({ id: 10n })
            : code?.message;
        expect(value.message).toBe(message);
      },
    );
  });

  describe('agrees with the gateway responses', () => {
    it.each(Object.values(gatewayResponses))(
      '$type: status, body and headers are documented',
      (gatewayResponse) => {
        const documented = documentedResponse(gatewayResponse.statusCode);
        expect(documented).toBeDefined();
        expect(schemaValidator('Error')(gatewayResponse.body)).toBe(true);
        const documentedHeaders = Object.keys(documented?.headers ?? {});
        for (const header of Object.keys(gatewayResponse.headers)) {
          if (header !== 'Content-Type') expect(documentedHeaders).toContain(header);
        }
      },
    );
  });

  describe('agrees with the NewPlant schema of the function', () => {
    const newPlant = openApiDocument.components.schemas.NewPlant;

    it('declares the same fields, with the same ones required', () => {
      const entries = Object.entries(newPlantSchema.entries);
      expect(Object.keys(newPlant?.properties ?? {})).toEqual(entries.map(([name]) => name));
      expect(newPlant?.required).toEqual(
        entries.filter(([, schema]) => schema.type !== 'optional').map(([name]) => name),
      );
    });

    it('bounds id by the exact int64 range', () => {
      // YAML parsers read numbers as doubles, which round 2^63 - 1: check the text itself.
      const idBounds = /id:\n(?:\s+\S.*\n)*?\s+minimum: (-?\d+)\n\s+maximum: (-?\d+)\n/.exec(
        openApiText,
      );
      expect(idBounds?.slice(1).map(BigInt)).toEqual([int64Min, int64Max]);
      expect(newPlant?.properties?.id).toMatchObject({ type: 'integer', format: 'int64' });
    });

    it('has request examples that are valid NewPlants and answer examples that are Plants', () => {
      const requestExamples = Object.values(
        createPlantOperation.requestBody.content['application/json'].examples ?? {},
      );
      expect(requestExamples.length).toBeGreaterThan(0);
      for (const { value } of requestExamples)
        expect(schemaValidator('NewPlant')(value)).toBe(true);
      const answers = responseExamples.filter((example) => example.status === 200);
      expect(answers.length).toBeGreaterThan(0);
      for (const { value } of answers) expect(schemaValidator('Plant')(value)).toBe(true);
    });
  });
});
