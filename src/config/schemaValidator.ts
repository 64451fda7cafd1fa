/**
 * The configuration schema's validator. Run from source (the tests, tsx), ajv compiles it when this module
 * loads; the bundle carries instead the code ajv generates for it at build time (scripts/build.mjs), without
 * ajv's compiler: loading ajv and compiling the schema at start cost each spout process 2 to 17 MiB of
 * resident memory (bench/idleMemory.ts), the compile running hot enough to page in V8's optimizing compiler.
 */
import Ajv, { type ValidateFunction } from 'ajv';
import { configSchema, configSchemaOptions } from './schema';

export const validateConfigSchema: ValidateFunction = new Ajv(configSchemaOptions).compile(configSchema);
