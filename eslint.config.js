// ESLint for the browser modules (games/static/games/, races/static/races/) and their Node tests.
import js from "@eslint/js";
import globals from "globals";

export default [
  // Other projects' JavaScript: the virtualenv's packages and collected static files.
  { ignores: [".venv/", "staticfiles/", "tests/artifacts/"] },
  js.configs.recommended,
  {
    files: ["games/static/games/**/*.js", "races/static/races/**/*.js"],
    languageOptions: { sourceType: "module", globals: globals.browser },
  },
  {
    files: ["tests/js/**/*.mjs", "eslint.config.js"],
    languageOptions: { sourceType: "module", globals: globals.node },
  },
];
