# expect: 2:1: error: class definition is not in the DSL subset
class Foo:
    pass
