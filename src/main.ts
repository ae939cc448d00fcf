#!/usr/bin/env node
console.log('kreload');
