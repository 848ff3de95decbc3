import ChorusServer
print("bench")
