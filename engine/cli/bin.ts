#!/usr/bin/env node
/**
 * Entry of the `sokoni` command in a checkout (`node engine/cli/bin.ts ...`): the same start as the bin, sokoni.js,
 * which turns on Node's compile cache, caps the young generation and runs serve's fresh bundle or the sources. Being
 * TypeScript, this file makes Node load its type stripper first (about 50 to 100 ms, E-531): `npx sokoni`, `npm start`
 * and the bench's start-up go through sokoni.js itself.
 */
import "./sokoni.js"
