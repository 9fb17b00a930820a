/**
 * The direction of imports (docs/architecture.md draws the same rules).
 * Lower layers never import higher ones; type-only imports count like any other.
 *   core     neutral contracts: text model, usage classes, task params, provider interfaces, errors
 *   lib      helpers with no business rules
 *   formats  the four wire formats' codecs (request, answer, stream events), both ways
 *   providers one vendor each, behind the core interfaces
 *   db, blobs, http, jobs  storage, result files, the HTTP edge, the jobs engine
 *   modules  the rules; the only layer that sees every other
 */
const layer = (name) => `^src/${name}/`;
const lower = ['core', 'lib', 'config[.]ts$'];

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'A cycle makes two files one unit that cannot be read or loaded apart.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-is-neutral',
      comment: 'core holds contracts and lib helpers: neither imports anything of ours above them.',
      severity: 'error',
      from: { path: '^src/(core|lib)/' },
      to: { path: '^src/', pathNot: '^src/(core|lib)/' },
    },
    {
      name: 'formats-speak-formats',
      comment: 'A wire format codec knows the neutral model and nothing of routing, money or storage.',
      severity: 'error',
      from: { path: layer('formats') },
      to: { path: '^src/', pathNot: '^src/(core|lib|formats)/' },
    },
    {
      name: 'providers-speak-one-vendor',
      comment: 'Providers import core, lib and the wire formats only; rules and storage reach them through core interfaces.',
      severity: 'error',
      from: { path: layer('providers') },
      to: { path: '^src/', pathNot: '^src/(core|lib|formats|providers)/' },
    },
    {
      name: 'modules-reach-providers-through-the-registry',
      comment: 'A module asks the registry for a channel type\'s providers; it never reaches into one vendor\'s files.',
      severity: 'error',
      from: { path: layer('modules') },
      to: { path: layer('providers'), pathNot: '^src/providers/(index|registry|channel-type)[.]ts$' },
    },
    {
      name: 'infrastructure-imports-no-module',
      comment: 'db, blobs, http and jobs serve the modules and never call them.',
      severity: 'error',
      from: { path: '^src/(db|blobs|http|jobs)/' },
      to: { path: '^src/', pathNot: '^src/(core|lib|db|blobs|http|jobs)/|^src/config[.]ts$' },
    },
    {
      name: 'modules-do-not-import-the-entry',
      comment: 'The app and the entry points are assembled from the layers, never the reverse.',
      severity: 'error',
      from: { path: '^src/(modules|providers|formats|core|lib|db|blobs|http|jobs)/' },
      to: { path: '^src/(app|main|cli|cli-options)[.]ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    parser: 'swc',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^src/console/' },
  },
};
