// Bundle the extension into dist/extension.js (one file, `vscode` left external),
// so the .vsix needs no node_modules (`vsce package --no-dependencies`).
import { build } from "esbuild";

await build({
  entryPoints: ["src/extension.ts"],
  bundle: true,
  outfile: "dist/extension.js",
  external: ["vscode"],
  format: "cjs",
  platform: "node",
  target: "node20",
  minify: true,
  sourcemap: true,
  logLevel: "warning",
});
