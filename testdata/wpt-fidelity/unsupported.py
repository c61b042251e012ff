# A Python handler wdext does not implement: it must answer 501, never
# this source.
def main(request, response):
    return "never run"
