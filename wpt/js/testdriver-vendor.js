// Part of wdext's testdriver: everything lives in testdriver.js.
