/** The math answer checker: extraction, normalisation, exact rationals, LaTeX translation and the layered check. */
export * from './guards.js';
export * from './extract.js';
export * from './response.js';
export * from './verifier.js';
export * from './normalize.js';
export * from './rational.js';
export * from './latex.js';
export * from './structure.js';
export * from './equivalence.js';
