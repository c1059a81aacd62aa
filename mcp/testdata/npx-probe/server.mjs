#!/usr/bin/env node
import { answer } from "./lib.mjs";
import { createInterface } from "node:readline";
createInterface({ input: process.stdin }).on("line", (line) => {
  const out = answer(JSON.parse(line));
  if (out) process.stdout.write(JSON.stringify(out) + "\n");
});
