// TypeBox through one module. From source it re-exports the package; in dist/ the build replaces it with one
// bundled file of the same (scripts/bundle-typebox.mjs): the package is ~250 ES modules, which the loader took
// 0.25–0.3 s to resolve, link and compile at every start of `svc up` and of each CLI command (the bundle: 0.03 s).
export * from '@sinclair/typebox';
export { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
export { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
export { Value } from '@sinclair/typebox/value';
